import CredentialFormats
import PushCore

/// The store's codes, each made by its one factory below.
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
    public static let alreadyImported = ErrorCode("already_imported")
    public static let aliasTaken = ErrorCode("alias_taken")
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

/// The factories of the store's codes (and ``ErrorCode/tampered``, which the team store throws
/// too): one per code, each taking the message the call site words and recording where the error
/// was made. A refusal (the request was checked and nothing changed) is a problem found.
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
        Self(
            .alreadyImported,
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
        Self(
            .aliasTaken,
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
}
