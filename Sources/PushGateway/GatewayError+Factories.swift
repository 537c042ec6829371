import PushCore

/// The factories of the settings and connection codes whose message the call site words, with the server it
/// names (the error's subject) when there is one; those whose message is always the same shape
/// are built in `GatewayError.swift`. Each records where the error was made.
extension GatewayError {
    // MARK: Settings

    /// ``ErrorCode/invalidEndpoint`` (`invalid_endpoint`), in the words of the call site.
    public static func invalidEndpoint(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .invalidEndpoint,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/invalidCredential`` (`invalid_credential`), in the words of the call site.
    public static func invalidCredential(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .invalidCredential,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/caFileUnreadable`` (`ca_file_unreadable`), in the words of the call site.
    public static func caFileUnreadable(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .caFileUnreadable,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/caFileInvalid`` (`ca_file_invalid`), in the words of the call site.
    public static func caFileInvalid(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .caFileInvalid,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/invalidProxy`` (`invalid_proxy`), in the words of the call site.
    public static func invalidProxy(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .invalidProxy,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/unsupportedProxy`` (`unsupported_proxy`), in the words of the call site.
    public static func unsupportedProxy(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .unsupportedProxy,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/proxyFailed`` (`proxy_failed`), in the words of the call site.
    public static func proxyFailed(
        message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .proxyFailed,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    // MARK: Reaching the server

    /// ``ErrorCode/dnsTimeout`` (`dns_timeout`), in the words of the call site.
    public static func dnsTimeout(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .dnsTimeout,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/noAddressForFamily`` (`no_address_for_family`), in the words of the call site.
    public static func noAddressForFamily(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .noAddressForFamily,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }

    /// ``ErrorCode/connectFailed`` (`connect_failed`), in the words of the call site.
    public static func connectFailed(
        _ message: String,
        hint: String? = nil,
        isRetryable: Bool = false,
        remedy: Remedy? = nil,
        server: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> GatewayError {
        Self(
            .connectFailed,
            message,
            hint: hint,
            isRetryable: isRetryable,
            remedy: remedy,
            server: server,
            file: file,
            line: line
        )
    }
}
