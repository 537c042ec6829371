import PushCore

/// The local gateway's codes, each declared once with the string JSON reports give. Each is made
/// where it happens, in that place's words: `LocalGatewayError(.cannotListen, path:, message, hint:)`.
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
