import CredentialFormats
import PushCore

/// The codes of imports and rotations the store turns down, each declared once with the string
/// JSON reports give.
extension ErrorCode {
    /// A rotation would put a certificate that expires sooner in place of the one it replaces.
    public static let expiresSooner = ErrorCode("expires_sooner", failure: .problem)
    /// A rotation would put a certificate in place of one that serves an environment or topic
    /// the new one does not.
    public static let narrowerCoverage = ErrorCode("narrower_coverage", failure: .problem)
    /// A change that only a token key's metadata can take was asked of a certificate.
    public static let notATokenKey = ErrorCode("not_a_token_key")
    /// A certificate without its key, and no pending request in the store holds that key.
    public static let noMatchingRequest = ErrorCode("no_matching_request")
    /// A certificate for the same topics and environments as a stored one, imported without
    /// saying it replaces that one.
    public static let sameAppStored = ErrorCode("same_app_stored", failure: .problem)
}

/// The factories of imports and rotations the store turns down (nothing changed; a refusal of a
/// valid request is a problem found), each taking the message the call site words and recording
/// where it was made.
extension CredentialError {
}
