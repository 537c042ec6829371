import Testing

extension Trait where Self == ConditionTrait {
    /// For suites whose commands use the Secret Service: enabled inside the private one that
    /// scripts/with-secret-service starts.
    static var needsPrivateSecretService: Self {
        .enabled(
            if: insideSecretService,
            "needs the private Secret Service that scripts/test starts (scripts/with-secret-service swift test)"
        )
    }
}
