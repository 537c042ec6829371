import PushCore

/// The factories of the team store's own codes (a store shared through git, its secrets
/// encrypted with age): one per code, each taking the message the call site words and recording
/// where the error was made. ``ErrorCode/tampered`` and ``ErrorCode/teamError``, which the store
/// itself throws too, are in `CredentialError+StoreFactories.swift`.
extension CredentialError {
    /// ``ErrorCode/notAMember`` (`not_a_member`), in the words of the call site: this member's
    /// identity is not (yet) a recipient of the team's secrets, or there is none to read with.
    public static func notAMember(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.notAMember, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

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
        Self(.teamConflict, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
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
        Self(.untrustedMembers, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
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
        Self(.historyRewritten, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/noSigningKey`` (`no_signing_key`), in the words of the call site: a
    /// membership change needs this member's signing key, and none is available here.
    public static func noSigningKey(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.noSigningKey, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }
}
