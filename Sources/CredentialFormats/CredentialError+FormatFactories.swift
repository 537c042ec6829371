import PushCore

/// The codes of files and credential formats, each declared once with the string JSON reports give.
extension ErrorCode {
    public static let notACertificate = ErrorCode("not_a_certificate")
    public static let corrupt = ErrorCode("corrupt")
    public static let truncated = ErrorCode("truncated")
    public static let noCertificate = ErrorCode("no_certificate")
    public static let passwordRequired = ErrorCode("password_required")
    public static let wrongPassword = ErrorCode("wrong_password")
    public static let unknownEncryption = ErrorCode("unknown_encryption")
    public static let legacyProviderUnavailable = ErrorCode("legacy_provider_unavailable")
    public static let noPrivateKey = ErrorCode("no_private_key")
    public static let keyMismatch = ErrorCode("key_mismatch")
    public static let unsupportedKey = ErrorCode("unsupported_key")
    public static let invalidArgument = ErrorCode("invalid_argument")
    /// A token key (.p8) was given without the team ID every JWT must name.
    public static let teamIDRequired = ErrorCode("team_id_required")
    /// A token key's ID cannot be read from its file name and was not given.
    public static let keyIDRequired = ErrorCode("key_id_required")
    /// A certificate with neither Apple's push extensions nor a push topic.
    public static let notAPushCertificate = ErrorCode("not_a_push_certificate", failure: .problem)
    /// A certificate that is expired or not yet valid, which APNs would refuse.
    public static let outsideValidity = ErrorCode("outside_validity", failure: .problem)
}

/// The factories of the format codes that are refusals (a problem found in the credential, not a
/// failure to check it); any other code here is made where it happens,
/// `CredentialError(.corrupt, path:, message, hint:)`.
extension CredentialError {
}
