import PushCore

/// The TLS and HTTP/2 codes (and the codes of other modules a gateway error carries), each declared
/// once with the string JSON reports give, and made where it happens, in that place's words:
/// `GatewayError(.tlsUntrusted, message, hint:)`.
extension ErrorCode {
    /// The server's certificate chain does not lead to a trusted root.
    public static let tlsUntrusted = ErrorCode("tls_untrusted")
    /// The server's certificate is not valid for the host name connected to.
    public static let tlsHostnameMismatch = ErrorCode("tls_hostname_mismatch")
    /// The server's certificate (or one in its chain) has expired or is not yet valid.
    public static let tlsCertificateExpired = ErrorCode("tls_certificate_expired")
    /// The TLS handshake failed for another reason (protocol version, alert from the server:
    /// often the server rejecting our client certificate).
    public static let tlsHandshakeFailed = ErrorCode("tls_handshake_failed")
    /// The server closed the connection during the TLS handshake.
    public static let tlsServerClosed = ErrorCode("tls_server_closed")
    /// The server refused our client certificate with a TLS alert (expired, revoked, unknown
    /// CA, bad certificate): a finding about the credential, not a failure to check.
    public static let clientCertificateRejected = ErrorCode(
        "client_certificate_rejected",
        failure: .problem  // a finding about the credential
    )
    /// HTTP/2 failed (protocol error from either side).
    public static let http2Failed = ErrorCode("http2_failed")
    /// The connection closed before the answer arrived.
    public static let connectionClosed = ErrorCode("connection_closed")
    /// The server reset the stream without answering (RST_STREAM other than NO_ERROR after a response).
    public static let streamReset = ErrorCode("stream_reset")
    /// The connection is not open (never connected, or closed by ``GatewayConnection/close()``).
    public static let notConnected = ErrorCode("not_connected")
}
