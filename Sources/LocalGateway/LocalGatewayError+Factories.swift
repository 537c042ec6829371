import PushCore

/// The codes this file's factories make, each declared once with the string JSON reports give.
extension ErrorCode {
    /// The device registry file is not valid JSON of the expected shape, or lists a bad token.
    public static let invalidRegistry = ErrorCode("invalid_registry")
    /// The gateway's own certificate or key cannot be read.
    public static let invalidIdentity = ErrorCode("invalid_identity")
    /// A client CA file cannot be read as PEM certificates.
    public static let invalidClientCA = ErrorCode("invalid_client_ca")
    /// The delivery log cannot be created.
    public static let logNotWritable = ErrorCode("log_not_writable")
    /// The listening address is taken or not allowed.
    public static let cannotListen = ErrorCode("cannot_listen")
    /// The CA given for minting cannot be read.
    public static let invalidCA = ErrorCode("invalid_ca")
    /// A test identity was asked for without a topic or an environment.
    public static let invalidMintRequest = ErrorCode("invalid_mint_request")
    /// A token key's public key is not a P-256 key in PEM.
    public static let invalidTokenKey = ErrorCode("invalid_token_key")
}

/// The factories of the local gateway's codes: one per code, each taking the message the call site
/// words and recording where the error was made (`#fileID`, `#line`).
extension LocalGatewayError {
    // MARK: Serving

    /// ``ErrorCode/invalidRegistry`` (`invalid_registry`), in the words of the call site.
    public static func invalidRegistry(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.invalidRegistry, path: path, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidIdentity`` (`invalid_identity`), in the words of the call site.
    public static func invalidIdentity(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.invalidIdentity, path: path, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidClientCA`` (`invalid_client_ca`), in the words of the call site.
    public static func invalidClientCA(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.invalidClientCA, path: path, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/logNotWritable`` (`log_not_writable`), in the words of the call site.
    public static func logNotWritable(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.logNotWritable, path: path, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/cannotListen`` (`cannot_listen`), in the words of the call site.
    public static func cannotListen(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.cannotListen, path: path, message, hint: hint, file: file, line: line)
    }

    // MARK: Minting

    /// ``ErrorCode/invalidCA`` (`invalid_ca`), in the words of the call site.
    public static func invalidCA(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.invalidCA, path: path, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidMintRequest`` (`invalid_mint_request`), in the words of the call site.
    public static func invalidMintRequest(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.invalidMintRequest, path: path, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidTokenKey`` (`invalid_token_key`), in the words of the call site.
    public static func invalidTokenKey(
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> LocalGatewayError {
        Self(.invalidTokenKey, path: path, message, hint: hint, file: file, line: line)
    }
}
