import PushCore

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
