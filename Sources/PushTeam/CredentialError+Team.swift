import CredentialFormats
import PushCore

/// The team store's codes, each declared once with the string JSON reports give.
extension ErrorCode {
    /// git or age failed, or the team repository is not in the shape apnsctl made.
    public static let teamError = ErrorCode("team_error")
    /// The same alias was changed on both sides of a sync.
    public static let teamConflict = ErrorCode("team_conflict")
    /// The member list the repository holds is not signed by a trusted member: nothing is
    /// encrypted to it (docs/team.md, "Signed membership").
    public static let untrustedMembers = ErrorCode("untrusted_members")
    /// The remote's branch no longer holds the commit this clone last synced.
    public static let historyRewritten = ErrorCode("history_rewritten")
    /// A membership change needs this member's signing key, and none is available here.
    public static let noSigningKey = ErrorCode("no_signing_key")
}

/// The factories of the team store's own codes (a store shared through git, its secrets
/// encrypted with age) that are refusals, a problem found; any other is made where it happens,
/// `CredentialError(.teamError, message, hint:)`. ``ErrorCode/tampered`` and ``ErrorCode/notAMember``, which the
/// store's seams mean too (a secret this process cannot read), are the store's (PushStore's
/// `CredentialError+Store.swift`).
extension CredentialError {
    /// ``ErrorCode/teamConflict`` (`team_conflict`), in the words of the call site: the same
    /// alias was changed on both sides of a sync.
    public static func teamConflict(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(
            .teamConflict,
            failure: .problem,
            path: path,
            message,
            hint: hint,
            alias: alias,
            remedy: remedy,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/untrustedMembers`` (`untrusted_members`), in the words of the call site: no
    /// member list of the repository is signed by a trusted member.
    public static func untrustedMembers(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(
            .untrustedMembers,
            failure: .problem,
            path: path,
            message,
            hint: hint,
            alias: alias,
            remedy: remedy,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/historyRewritten`` (`history_rewritten`), in the words of the call site: the
    /// remote's branch no longer holds the commit this clone last synced.
    public static func historyRewritten(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(
            .historyRewritten,
            failure: .problem,
            path: path,
            message,
            hint: hint,
            alias: alias,
            remedy: remedy,
            file: file,
            line: line
        )
    }

}
