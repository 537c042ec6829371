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
