import PushCore

/// The settings and connection codes, each declared once with the string JSON reports give. A code
/// whose message is always the same shape has its factory in `GatewayError.swift`
/// (`GatewayError.connectionRefused(_:)`); any other is made where it happens, in that place's
/// words: `GatewayError(.invalidEndpoint, message, hint:)`.
extension ErrorCode {
    /// The endpoint text (a gateway address or port) cannot be understood.
    public static let invalidEndpoint = ErrorCode("invalid_endpoint")
    /// The credential cannot be used for TLS.
    public static let invalidCredential = ErrorCode("invalid_credential")
    /// A CA file given as an extra trust root cannot be read.
    public static let caFileUnreadable = ErrorCode("ca_file_unreadable")
    /// A CA file given as an extra trust root holds no readable certificate.
    public static let caFileInvalid = ErrorCode("ca_file_invalid")
    /// The proxy setting (given, or from HTTPS_PROXY) is not a proxy URL.
    public static let invalidProxy = ErrorCode("invalid_proxy")
    /// The host name does not resolve.
    public static let dnsFailed = ErrorCode("dns_failed")
    /// Name resolution took longer than its timeout.
    public static let dnsTimeout = ErrorCode("dns_timeout")
    /// The host has no address of the one family asked for.
    public static let noAddressForFamily = ErrorCode("no_address_for_family")
    /// Nothing listens on the port (TCP RST).
    public static let connectionRefused = ErrorCode("connection_refused")
    /// The TCP connection failed in another way (unreachable network, reset).
    public static let connectFailed = ErrorCode("connect_failed")
    /// TCP connect took longer than its timeout (a firewall dropping packets, usually).
    public static let connectTimeout = ErrorCode("connect_timeout")
    /// The proxy's scheme is not one spoken (only HTTP CONNECT is).
    public static let unsupportedProxy = ErrorCode(
        "unsupported_proxy",
        failure: .invalidRequest  // a setting to change, wherever it came from
    )
    /// The HTTP CONNECT proxy refused or failed the tunnel.
    public static let proxyFailed = ErrorCode("proxy_failed")
    /// The TLS handshake took longer than its timeout (the server accepted TCP but never answered).
    public static let tlsTimeout = ErrorCode("tls_timeout")
    /// The server negotiated an ALPN protocol other than h2.
    public static let alpnRejected = ErrorCode("alpn_rejected")
    /// The server's first HTTP/2 SETTINGS frame did not arrive in time.
    public static let http2Timeout = ErrorCode("http2_timeout")
    /// The server sent GOAWAY: the connection takes no new streams.
    public static let goAway = ErrorCode("go_away")
    /// No answer arrived within the request timeout.
    public static let requestTimeout = ErrorCode("request_timeout")
    /// The request was written and the connection closed before its answer: the server may
    /// have delivered the notification.
    public static let answerLost = ErrorCode("answer_lost")
}
