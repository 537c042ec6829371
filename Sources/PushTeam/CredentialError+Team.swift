import CredentialFormats
import PushCore

/// The team store's codes, each declared once with the string JSON reports give.
extension ErrorCode {
    /// git or age failed, or the team repository is not in the shape apnsctl made.
    public static let teamError = ErrorCode("team_error")
    /// The same alias was changed on both sides of a sync.
    public static let teamConflict = ErrorCode("team_conflict", failure: .problem)
    /// The member list the repository holds is not signed by a trusted member: nothing is
    /// encrypted to it (docs/team.md, "Signed membership").
    public static let untrustedMembers = ErrorCode("untrusted_members", failure: .problem)
    /// The remote's branch no longer holds the commit this clone last synced.
    public static let historyRewritten = ErrorCode("history_rewritten", failure: .problem)
    /// A membership change needs this member's signing key, and none is available here.
    public static let noSigningKey = ErrorCode("no_signing_key")
}

/// The factories of the team store's own codes (a store shared through git, its secrets
/// encrypted with age) that are refusals, a problem found; any other is made where it happens,
/// `CredentialError(.teamError, message, hint:)`. ``ErrorCode/tampered`` and ``ErrorCode/notAMember``, which the
/// store's seams mean too (a secret this process cannot read), are the store's (PushStore's
/// `CredentialError+Store.swift`).
extension CredentialError {
}
