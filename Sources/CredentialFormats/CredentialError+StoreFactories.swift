import PushCore

/// The factories of the store's codes (and the team store's that the store itself throws): one per
/// code, each taking the message the call site words and recording where the error was made.
extension CredentialError {
    // MARK: The Secret Service

    /// ``ErrorCode/secretStoreUnavailable`` (`secret_store_unavailable`), in the words of the call site.
    public static func secretStoreUnavailable(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(
            .secretStoreUnavailable,
            path: path,
            message,
            hint: hint,
            alias: alias,
            remedy: remedy,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/secretStoreLocked`` (`secret_store_locked`), in the words of the call site.
    public static func secretStoreLocked(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.secretStoreLocked, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/secretNotFound`` (`secret_not_found`), in the words of the call site.
    public static func secretNotFound(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.secretNotFound, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    // MARK: The store

    /// ``ErrorCode/storeError`` (`store_error`), in the words of the call site.
    public static func storeError(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.storeError, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/alreadyImported`` (`already_imported`), in the words of the call site.
    public static func alreadyImported(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.alreadyImported, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/aliasTaken`` (`alias_taken`), in the words of the call site.
    public static func aliasTaken(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.aliasTaken, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/invalidAlias`` (`invalid_alias`), in the words of the call site.
    public static func invalidAlias(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.invalidAlias, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/notAStore`` (`not_a_store`), in the words of the call site.
    public static func notAStore(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.notAStore, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/indexMissing`` (`index_missing`), in the words of the call site.
    public static func indexMissing(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.indexMissing, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/indexUnreadable`` (`index_unreadable`), in the words of the call site.
    public static func indexUnreadable(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.indexUnreadable, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/entryOutsideStore`` (`entry_outside_store`), in the words of the call site.
    public static func entryOutsideStore(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.entryOutsideStore, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/notCheckedOut`` (`not_checked_out`), in the words of the call site.
    public static func notCheckedOut(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.notCheckedOut, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/unsafeStoreFolder`` (`unsafe_store_folder`), in the words of the call site.
    public static func unsafeStoreFolder(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.unsafeStoreFolder, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/tampered`` (`tampered`), in the words of the call site.
    public static func tampered(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.tampered, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/teamError`` (`team_error`), in the words of the call site.
    public static func teamError(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.teamError, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    // MARK: Imports and rotations

    /// ``ErrorCode/expiresSooner`` (`expires_sooner`), in the words of the call site.
    public static func expiresSooner(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.expiresSooner, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/narrowerCoverage`` (`narrower_coverage`), in the words of the call site.
    public static func narrowerCoverage(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.narrowerCoverage, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/notATokenKey`` (`not_a_token_key`), in the words of the call site.
    public static func notATokenKey(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.notATokenKey, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/noMatchingRequest`` (`no_matching_request`), in the words of the call site.
    public static func noMatchingRequest(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.noMatchingRequest, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/sameAppStored`` (`same_app_stored`), in the words of the call site.
    public static func sameAppStored(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.sameAppStored, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    // MARK: Exports

    /// ``ErrorCode/notExportable`` (`not_exportable`), in the words of the call site.
    public static func notExportable(
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.notExportable, path: nil, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }
}
