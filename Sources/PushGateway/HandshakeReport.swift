import Foundation

/// What happened while connecting, phase by phase: for handshake diagnostics and
/// for JSON reports. Durations are in seconds, measured with a monotonic clock.
public struct HandshakeReport: Encodable, Sendable {
    public struct CertificateInfo: Codable, Sendable, Equatable {
        public var subject: String
        public var issuer: String
        public var notBefore: Date
        public var notAfter: Date
        /// SHA-256 of the DER, upper-case hex with colons (as `openssl x509 -fingerprint` prints it).
        public var sha256: String
    }

    /// The verdict on the server's certificate chain.
    public enum TrustVerdict: String, Codable, Sendable {
        /// The chain leads to a trusted root and the certificate names the host.
        case trusted
        /// The chain does not lead to a trusted root.
        case untrusted
        /// The chain is trusted but the certificate does not name the host.
        case hostnameMismatch = "hostname_mismatch"
        /// A certificate in the chain has expired or is not yet valid.
        case expired
        /// The handshake did not get as far as the server's certificate.
        case notChecked = "not_checked"
    }

    /// Which trust roots the verdict was made against.
    public enum TrustSource: String, Codable, Sendable {
        /// The operating system's trust store.
        case system
        /// The system store plus the CA file(s) given (``GatewayConfiguration/caFiles``).
        case systemAndCustom = "system_and_custom"
        /// Only the CA file(s) given.
        case custom
        /// A CA bundle given in place of the system's store (``GatewayConfiguration/caBundle``).
        case bundle
        /// That bundle plus the CA file(s) given.
        case bundleAndCustom = "bundle_and_custom"
    }

    /// The root the server's chain was verified up to: the trust anchor.
    public struct Anchor: Codable, Sendable, Equatable {
        /// Which of the trusted roots it is.
        public enum Origin: String, Codable, Sendable {
            /// The system's trust store.
            case system
            /// The CA bundle given in place of the system's.
            case bundle
            /// A CA file given on top (a local gateway's CA, a proxy's).
            case caFile = "ca_file"
        }
        public var subject: String
        /// SHA-256 of its SubjectPublicKeyInfo, lower-case hex (as ``APNsTrustRoot/spkiSHA256``).
        public var spkiSHA256: String
        /// SHA-256 of its certificate's DER, as ``CertificateInfo/sha256``.
        public var sha256: String
        public var origin: Origin
        /// The name of the APNs root it is (``APNsTrustRoots/table``); nil for any other root.
        public var apnsRoot: String?
    }

    public var endpoint: Endpoint
    /// The HTTP CONNECT proxy used, as `host:port` (never with credentials).
    public var proxy: String?
    /// The address connected to (the proxy's when there is one).
    public var resolvedAddress: String?
    /// Every address the name resolved to (of the family asked for, when one was).
    public var resolvedAddresses: [String] = []
    /// `ipv4` or `ipv6`: the family of ``resolvedAddress``.
    public var addressFamily: String?

    public var dnsDuration: Double?
    public var tcpConnectDuration: Double?
    public var proxyConnectDuration: Double?
    public var tlsHandshakeDuration: Double?
    /// From the end of TLS to the server's first SETTINGS frame.
    public var http2ReadyDuration: Double?
    public var totalDuration: Double?

    /// `TLSv1.2` or `TLSv1.3`.
    public var tlsVersion: String?
    /// Not exposed by swift-nio-ssl; always nil for now (kept so the JSON shape is stable).
    public var cipherSuite: String?
    /// The ALPN protocol the server chose; nil when it chose none (APNs then still speaks h2).
    public var alpn: String?
    /// The chain as the server presented it, leaf first.
    public var serverCertificates: [CertificateInfo] = []
    public var trust: TrustVerdict = .notChecked
    public var trustSource: TrustSource = .system
    /// Why the chain was not trusted, as the verifier said it.
    public var trustDetail: String?
    /// The root the chain was verified up to, when it was.
    public var anchor: Anchor?

    /// The server's SETTINGS, by name (`SETTINGS_MAX_CONCURRENT_STREAMS`...).
    public var serverSettings: [String: UInt32] = [:]
    /// SETTINGS_MAX_CONCURRENT_STREAMS as first announced (nil: the server set no limit).
    public var maxConcurrentStreams: UInt32?

    /// The phase that failed, if one did: `dns`, `tcp`, `proxy`, `tls`, `http2`.
    public var failedPhase: String?
    /// What went wrong, with the code of the ``GatewayError`` and its hint.
    /// Typed: a program decides on its code; the JSON report gives it as ``ReportedError``.
    public var error: GatewayError?

    public init(endpoint: Endpoint) {
        self.endpoint = endpoint
    }
}
