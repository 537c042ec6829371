import PushCore

/// The factories of the codes whose message the call site words (those whose message is always
/// the same shape are built in `GatewayError.swift`): each records where the error was made.
extension GatewayError {
    // MARK: Settings

    /// ``ErrorCode/invalidEndpoint`` (`invalid_endpoint`), in the words of the call site.
    public static func invalidEndpoint(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.invalidEndpoint, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/invalidCredential`` (`invalid_credential`), in the words of the call site.
    public static func invalidCredential(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.invalidCredential, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/caFileUnreadable`` (`ca_file_unreadable`), in the words of the call site.
    public static func caFileUnreadable(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.caFileUnreadable, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/caFileInvalid`` (`ca_file_invalid`), in the words of the call site.
    public static func caFileInvalid(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.caFileInvalid, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/invalidProxy`` (`invalid_proxy`), in the words of the call site.
    public static func invalidProxy(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.invalidProxy, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/unsupportedProxy`` (`unsupported_proxy`), in the words of the call site.
    public static func unsupportedProxy(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.unsupportedProxy, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/proxyFailed`` (`proxy_failed`), in the words of the call site.
    public static func proxyFailed(
        message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.proxyFailed, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    // MARK: Reaching the server

    /// ``ErrorCode/dnsTimeout`` (`dns_timeout`), in the words of the call site.
    public static func dnsTimeout(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.dnsTimeout, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/noAddressForFamily`` (`no_address_for_family`), in the words of the call site.
    public static func noAddressForFamily(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.noAddressForFamily, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/connectFailed`` (`connect_failed`), in the words of the call site.
    public static func connectFailed(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.connectFailed, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    // MARK: TLS

    /// ``ErrorCode/tlsUntrusted`` (`tls_untrusted`), in the words of the call site.
    public static func tlsUntrusted(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.tlsUntrusted, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/tlsHostnameMismatch`` (`tls_hostname_mismatch`), in the words of the call site.
    public static func tlsHostnameMismatch(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .tlsHostnameMismatch,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
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
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .tlsCertificateExpired,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
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
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.tlsHandshakeFailed, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/tlsServerClosed`` (`tls_server_closed`), in the words of the call site.
    public static func tlsServerClosed(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.tlsServerClosed, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/clientCertificateRejected`` (`client_certificate_rejected`), in the words of the call site.
    public static func clientCertificateRejected(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .clientCertificateRejected,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
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
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.http2Failed, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/streamReset`` (`stream_reset`), in the words of the call site.
    public static func streamReset(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.streamReset, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/connectionClosed`` (`connection_closed`), in the words of the call site.
    public static func connectionClosed(
        message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.connectionClosed, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
    }

    /// ``ErrorCode/notConnected`` (`not_connected`), in the words of the call site.
    public static func notConnected(
        message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(.notConnected, message, hint: hint, isRetryable: isRetryable, remedy: remedy, file: file, line: line)
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
