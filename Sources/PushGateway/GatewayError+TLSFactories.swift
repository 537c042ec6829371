import PushCore

/// The codes this file's factories make, each declared once with the string JSON reports give.
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
    public static let clientCertificateRejected = ErrorCode("client_certificate_rejected")
    /// HTTP/2 failed (protocol error from either side).
    public static let http2Failed = ErrorCode("http2_failed")
    /// The connection closed before the answer arrived.
    public static let connectionClosed = ErrorCode("connection_closed")
    /// The server reset the stream without answering (RST_STREAM other than NO_ERROR after a response).
    public static let streamReset = ErrorCode("stream_reset")
    /// The connection is not open (never connected, or closed by ``GatewayConnection/close()``).
    public static let notConnected = ErrorCode("not_connected")
}

/// The factories of the TLS and HTTP/2 codes (and of other modules' codes) whose message the call site words, with the server it
/// names (the error's subject) when there is one; those whose message is always the same shape
/// are built in `GatewayError.swift`. Each records where the error was made.
extension GatewayError {
    // MARK: TLS

    /// ``ErrorCode/tlsUntrusted`` (`tls_untrusted`), in the words of the call site.
    public static func tlsUntrusted(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .tlsUntrusted,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/tlsHostnameMismatch`` (`tls_hostname_mismatch`), in the words of the call site.
    public static func tlsHostnameMismatch(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .tlsHostnameMismatch,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/tlsCertificateExpired`` (`tls_certificate_expired`), in the words of the call site.
    public static func tlsCertificateExpired(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .tlsCertificateExpired,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/tlsHandshakeFailed`` (`tls_handshake_failed`), in the words of the call site.
    public static func tlsHandshakeFailed(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .tlsHandshakeFailed,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/tlsServerClosed`` (`tls_server_closed`), in the words of the call site.
    public static func tlsServerClosed(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .tlsServerClosed,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/clientCertificateRejected`` (`client_certificate_rejected`), in the words of the call site.
    public static func clientCertificateRejected(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .clientCertificateRejected,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    // MARK: HTTP/2

    /// ``ErrorCode/http2Failed`` (`http2_failed`), in the words of the call site.
    public static func http2Failed(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .http2Failed,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/streamReset`` (`stream_reset`), in the words of the call site.
    public static func streamReset(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .streamReset,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/connectionClosed`` (`connection_closed`), in the words of the call site.
    public static func connectionClosed(
        message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .connectionClosed,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/notConnected`` (`not_connected`), in the words of the call site.
    public static func notConnected(
        message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .notConnected,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    // MARK: Codes of other modules

    /// ``ErrorCode/invalidNotification`` (`invalid_notification`): a request APNs would refuse,
    /// found before it was sent.
    public static func invalidNotification(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.invalidNotification, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/fileTooLarge`` (`file_too_large`): the file at `path` (a CA bundle) is larger
    /// than any of its kind; a person reads the path before the message.
    public static func fileTooLarge(
        path: String,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.fileTooLarge, message, hint: hint, path: path, file: file, line: line)
    }
}
