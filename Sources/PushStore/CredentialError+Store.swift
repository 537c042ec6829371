import CredentialFormats
import PushCore

/// The store's codes, each declared once with the string JSON reports give.
extension ErrorCode {
    /// A secret store's secret this process cannot decrypt: this member's identity is not
    /// (yet) a recipient of the team's secrets, or there is none.
    public static let notAMember = ErrorCode("not_a_member")
    /// No stored credential has the alias asked for.
    public static let aliasNotFound = ErrorCode("alias_not_found")
    public static let secretStoreUnavailable = ErrorCode("secret_store_unavailable")
    public static let secretStoreLocked = ErrorCode("secret_store_locked")
    public static let secretNotFound = ErrorCode("secret_not_found")
    public static let storeError = ErrorCode("store_error")
    public static let alreadyImported = ErrorCode("already_imported", failure: .problem)
    public static let aliasTaken = ErrorCode("alias_taken", failure: .problem)
    /// An alias that cannot be a file name in the store.
    public static let invalidAlias = ErrorCode("invalid_alias")
    /// The store's folder holds something other than a store.
    public static let notAStore = ErrorCode("not_a_store")
    /// The store's credentials folder holds files but its index is missing.
    public static let indexMissing = ErrorCode("index_missing")
    /// The store's index cannot be read or decoded.
    public static let indexUnreadable = ErrorCode("index_unreadable")
    /// An index entry names a file outside the store's credentials folder.
    public static let entryOutsideStore = ErrorCode("entry_outside_store")
    /// The store folder is a git clone with nothing checked out (a team store cloned from a
    /// remote whose HEAD names a branch it does not have).
    public static let notCheckedOut = ErrorCode("not_checked_out")
    /// The store's folder is owned by someone else, or others may write to it.
    public static let unsafeStoreFolder = ErrorCode("unsafe_store_folder")
    /// A decrypted secret does not match the certificate or key fingerprint the index names.
    public static let tampered = ErrorCode("tampered")
    /// A credential cannot be written in the format asked for (a token key as PKCS#12).
    public static let notExportable = ErrorCode("not_exportable")
}

/// The factories of the store's codes that are refusals (the request was checked and nothing
/// changed: a problem found) or take the alias first. Any other code here (``ErrorCode/tampered``
/// too, which the team store throws) is made where it happens,
/// `CredentialError(.storeError, path:, message, hint:)`.
extension CredentialError {
    /// `alias_not_found`: no stored credential is named `alias` (nil when none was named at all).
    /// The message differs with what was looked for, so the call site words it.
    public static func aliasNotFound(
        _ alias: String?,
        _ message: String,
        hint: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.aliasNotFound, path: nil, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    // MARK: The Secret Service

    // MARK: The store

    // MARK: Exports

}
