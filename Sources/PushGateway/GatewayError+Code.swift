import CredentialFormats
import PushCore

extension GatewayError {
    /// What went wrong, one of a closed set (a private enum behind static constants, as
    /// swift-certificates names its codes): compare with the constants (`error.code == .tlsUntrusted`)
    /// or switch on them; a new code is a new constant, never a new case that breaks a switch.
    /// Each is one of ``ErrorCode``'s, the string JSON reports give (``errorCode``).
    public struct Code: ClosedErrorCode {
        private enum Backing: Hashable, Sendable, CaseIterable {
            case invalidEndpoint, invalidCredential, caFileUnreadable, caFileInvalid, invalidProxy, dnsFailed
            case dnsTimeout, noAddressForFamily, connectionRefused, connectFailed, connectTimeout
            case unsupportedProxy, proxyFailed, tlsUntrusted, tlsHostnameMismatch, tlsCertificateExpired
            case tlsHandshakeFailed, tlsServerClosed, clientCertificateRejected, tlsTimeout, alpnRejected
            case http2Timeout, http2Failed, goAway, connectionClosed, streamReset, requestTimeout, answerLost
            case notConnected, fileTooLarge, invalidNotification
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// `invalid_endpoint` (``ErrorCode/invalidEndpoint``).
        public static let invalidEndpoint = Code(.invalidEndpoint)
        /// `invalid_credential` (``ErrorCode/invalidCredential``).
        public static let invalidCredential = Code(.invalidCredential)
        /// `ca_file_unreadable` (``ErrorCode/caFileUnreadable``).
        public static let caFileUnreadable = Code(.caFileUnreadable)
        /// `ca_file_invalid` (``ErrorCode/caFileInvalid``).
        public static let caFileInvalid = Code(.caFileInvalid)
        /// `invalid_proxy` (``ErrorCode/invalidProxy``).
        public static let invalidProxy = Code(.invalidProxy)
        /// `dns_failed` (``ErrorCode/dnsFailed``).
        public static let dnsFailed = Code(.dnsFailed)
        /// `dns_timeout` (``ErrorCode/dnsTimeout``).
        public static let dnsTimeout = Code(.dnsTimeout)
        /// `no_address_for_family` (``ErrorCode/noAddressForFamily``).
        public static let noAddressForFamily = Code(.noAddressForFamily)
        /// `connection_refused` (``ErrorCode/connectionRefused``).
        public static let connectionRefused = Code(.connectionRefused)
        /// `connect_failed` (``ErrorCode/connectFailed``).
        public static let connectFailed = Code(.connectFailed)
        /// `connect_timeout` (``ErrorCode/connectTimeout``).
        public static let connectTimeout = Code(.connectTimeout)
        /// `unsupported_proxy` (``ErrorCode/unsupportedProxy``).
        public static let unsupportedProxy = Code(.unsupportedProxy)
        /// `proxy_failed` (``ErrorCode/proxyFailed``).
        public static let proxyFailed = Code(.proxyFailed)
        /// `tls_untrusted` (``ErrorCode/tlsUntrusted``).
        public static let tlsUntrusted = Code(.tlsUntrusted)
        /// `tls_hostname_mismatch` (``ErrorCode/tlsHostnameMismatch``).
        public static let tlsHostnameMismatch = Code(.tlsHostnameMismatch)
        /// `tls_certificate_expired` (``ErrorCode/tlsCertificateExpired``).
        public static let tlsCertificateExpired = Code(.tlsCertificateExpired)
        /// `tls_handshake_failed` (``ErrorCode/tlsHandshakeFailed``).
        public static let tlsHandshakeFailed = Code(.tlsHandshakeFailed)
        /// `tls_server_closed` (``ErrorCode/tlsServerClosed``).
        public static let tlsServerClosed = Code(.tlsServerClosed)
        /// `client_certificate_rejected` (``ErrorCode/clientCertificateRejected``).
        public static let clientCertificateRejected = Code(.clientCertificateRejected)
        /// `tls_timeout` (``ErrorCode/tlsTimeout``).
        public static let tlsTimeout = Code(.tlsTimeout)
        /// `alpn_rejected` (``ErrorCode/alpnRejected``).
        public static let alpnRejected = Code(.alpnRejected)
        /// `http2_timeout` (``ErrorCode/http2Timeout``).
        public static let http2Timeout = Code(.http2Timeout)
        /// `http2_failed` (``ErrorCode/http2Failed``).
        public static let http2Failed = Code(.http2Failed)
        /// `go_away` (``ErrorCode/goAway``).
        public static let goAway = Code(.goAway)
        /// `connection_closed` (``ErrorCode/connectionClosed``).
        public static let connectionClosed = Code(.connectionClosed)
        /// `stream_reset` (``ErrorCode/streamReset``).
        public static let streamReset = Code(.streamReset)
        /// `request_timeout` (``ErrorCode/requestTimeout``).
        public static let requestTimeout = Code(.requestTimeout)
        /// `answer_lost` (``ErrorCode/answerLost``).
        public static let answerLost = Code(.answerLost)
        /// `not_connected` (``ErrorCode/notConnected``).
        public static let notConnected = Code(.notConnected)
        /// `file_too_large` (``ErrorCode/fileTooLarge``).
        public static let fileTooLarge = Code(.fileTooLarge)
        /// `invalid_notification` (``ErrorCode/invalidNotification``).
        public static let invalidNotification = Code(.invalidNotification)

        /// Every code of this error.
        public static var all: [Code] { Backing.allCases.map(Code.init) }

        /// The code as JSON reports give it, one of ``ErrorCode``'s static members.
        public var errorCode: ErrorCode {
            switch backing {
            case .invalidEndpoint: return .invalidEndpoint
            case .invalidCredential: return .invalidCredential
            case .caFileUnreadable: return .caFileUnreadable
            case .caFileInvalid: return .caFileInvalid
            case .invalidProxy: return .invalidProxy
            case .dnsFailed: return .dnsFailed
            case .dnsTimeout: return .dnsTimeout
            case .noAddressForFamily: return .noAddressForFamily
            case .connectionRefused: return .connectionRefused
            case .connectFailed: return .connectFailed
            case .connectTimeout: return .connectTimeout
            case .unsupportedProxy: return .unsupportedProxy
            case .proxyFailed: return .proxyFailed
            case .tlsUntrusted: return .tlsUntrusted
            case .tlsHostnameMismatch: return .tlsHostnameMismatch
            case .tlsCertificateExpired: return .tlsCertificateExpired
            case .tlsHandshakeFailed: return .tlsHandshakeFailed
            case .tlsServerClosed: return .tlsServerClosed
            case .clientCertificateRejected: return .clientCertificateRejected
            case .tlsTimeout: return .tlsTimeout
            case .alpnRejected: return .alpnRejected
            case .http2Timeout: return .http2Timeout
            case .http2Failed: return .http2Failed
            case .goAway: return .goAway
            case .connectionClosed: return .connectionClosed
            case .streamReset: return .streamReset
            case .requestTimeout: return .requestTimeout
            case .answerLost: return .answerLost
            case .notConnected: return .notConnected
            case .fileTooLarge: return .fileTooLarge
            case .invalidNotification: return .invalidNotification
            }
        }

    }
}

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
    public static let unsupportedProxy = ErrorCode("unsupported_proxy")
    /// The HTTP CONNECT proxy refused or failed the tunnel.
    public static let proxyFailed = ErrorCode("proxy_failed")
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
    /// The TLS handshake took longer than its timeout (the server accepted TCP but never answered).
    public static let tlsTimeout = ErrorCode("tls_timeout")
    /// The server negotiated an ALPN protocol other than h2.
    public static let alpnRejected = ErrorCode("alpn_rejected")
    /// The server's first HTTP/2 SETTINGS frame did not arrive in time.
    public static let http2Timeout = ErrorCode("http2_timeout")
    /// HTTP/2 failed (protocol error from either side).
    public static let http2Failed = ErrorCode("http2_failed")
    /// The server sent GOAWAY: the connection takes no new streams.
    public static let goAway = ErrorCode("go_away")
    /// The connection closed before the answer arrived.
    public static let connectionClosed = ErrorCode("connection_closed")
    /// The server reset the stream without answering (RST_STREAM other than NO_ERROR after a response).
    public static let streamReset = ErrorCode("stream_reset")
    /// No answer arrived within the request timeout.
    public static let requestTimeout = ErrorCode("request_timeout")
    /// The request was written and the connection closed before its answer: the server may
    /// have delivered the notification.
    public static let answerLost = ErrorCode("answer_lost")
    /// The connection is not open (never connected, or closed by ``GatewayConnection/close()``).
    public static let notConnected = ErrorCode("not_connected")
}
