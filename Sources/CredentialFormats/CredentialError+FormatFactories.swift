import PushCore

/// The codes this file's factories make, each declared once with the string JSON reports give.
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
    public static let notAPushCertificate = ErrorCode("not_a_push_certificate")
    /// A certificate that is expired or not yet valid, which APNs would refuse.
    public static let outsideValidity = ErrorCode("outside_validity")
}

/// The factories of the codes about credential formats, keys and identifiers: one per code, each
/// taking the message the call site words and recording where the error was made.
extension CredentialError {
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
        Self(
            .outsideValidity,
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
