import PushCore

/// The factories of the codes about files and credential formats: one per code, each taking the
/// message the call site words and recording where the error was made (`#fileID`, `#line`).
extension CredentialError {
    // MARK: Files

    /// ``ErrorCode/fileNotFound`` (`file_not_found`), in the words of the call site.
    public static func fileNotFound(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.fileNotFound, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/isDirectory`` (`is_directory`), in the words of the call site.
    public static func isDirectory(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.isDirectory, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/unreadable`` (`unreadable`), in the words of the call site.
    public static func unreadable(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.unreadable, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/emptyFile`` (`empty_file`), in the words of the call site.
    public static func emptyFile(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.emptyFile, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/fileTooLarge`` (`file_too_large`), in the words of the call site.
    public static func fileTooLarge(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.fileTooLarge, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/excessiveWork`` (`excessive_iterations`), in the words of the call site.
    public static func excessiveWork(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.excessiveWork, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/fileExists`` (`file_exists`), in the words of the call site.
    public static func fileExists(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.fileExists, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/writeFailed`` (`write_failed`), in the words of the call site.
    public static func writeFailed(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.writeFailed, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/notARegularFile`` (`not_a_regular_file`), in the words of the call site.
    public static func notARegularFile(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.notARegularFile, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    // MARK: Credential formats

    /// ``ErrorCode/notACertificate`` (`not_a_certificate`), in the words of the call site.
    public static func notACertificate(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.notACertificate, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/corrupt`` (`corrupt`), in the words of the call site.
    public static func corrupt(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.corrupt, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/truncated`` (`truncated`), in the words of the call site.
    public static func truncated(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.truncated, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/noCertificate`` (`no_certificate`), in the words of the call site.
    public static func noCertificate(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.noCertificate, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/passwordRequired`` (`password_required`), in the words of the call site.
    public static func passwordRequired(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.passwordRequired, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/wrongPassword`` (`wrong_password`), in the words of the call site.
    public static func wrongPassword(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.wrongPassword, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/unknownEncryption`` (`unknown_encryption`), in the words of the call site.
    public static func unknownEncryption(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.unknownEncryption, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/legacyProviderUnavailable`` (`legacy_provider_unavailable`), in the words of the call site.
    public static func legacyProviderUnavailable(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(
            .legacyProviderUnavailable,
            path: path,
            message,
            hint: hint,
            alias: alias,
            remedy: remedy,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/noPrivateKey`` (`no_private_key`), in the words of the call site.
    public static func noPrivateKey(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.noPrivateKey, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/keyMismatch`` (`key_mismatch`), in the words of the call site.
    public static func keyMismatch(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.keyMismatch, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/unsupportedKey`` (`unsupported_key`), in the words of the call site.
    public static func unsupportedKey(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.unsupportedKey, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/invalidArgument`` (`invalid_argument`), in the words of the call site.
    public static func invalidArgument(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.invalidArgument, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/teamIDRequired`` (`team_id_required`), in the words of the call site.
    public static func teamIDRequired(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.teamIDRequired, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/keyIDRequired`` (`key_id_required`), in the words of the call site.
    public static func keyIDRequired(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.keyIDRequired, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/invalidTeamID`` (`invalid_team_id`), in the words of the call site.
    public static func invalidTeamID(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.invalidTeamID, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/invalidKeyID`` (`invalid_key_id`), in the words of the call site.
    public static func invalidKeyID(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.invalidKeyID, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/notAPushCertificate`` (`not_a_push_certificate`), in the words of the call site.
    public static func notAPushCertificate(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(
            .notAPushCertificate,
            path: path,
            message,
            hint: hint,
            alias: alias,
            remedy: remedy,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/outsideValidity`` (`outside_validity`), in the words of the call site.
    public static func outsideValidity(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> CredentialError {
        Self(.outsideValidity, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }
}
