import CredentialFormats
import Foundation

/// How to reach a gateway and who to be there.
public struct GatewayConfiguration: Sendable {
    /// Each phase of connecting has its own limit, so a failure names the phase that hung.
    public struct Timeouts: Sendable, Equatable {
        public var dns: Double = 10
        public var connect: Double = 10
        public var tls: Double = 10
        /// From the end of TLS to the server's first SETTINGS frame.
        public var http2: Double = 10
        /// From writing a notification to the end of its answer.
        public var request: Double = 30
        public init() {}
    }

    /// swift-nio-http2 ships server-minded denial-of-service limits: at most 200 inbound
    /// RST_STREAM frames per 30 seconds and a budget of 200 "glitches" that never refills.
    /// A server that answers early and then resets every stream with NO_ERROR (nginx does, and
    /// RFC 9113 section 8.1 allows it) would get a bulk sender's connection killed after a few
    /// hundred notifications, and its answered streams counted as abuse. swift-nio-http2 counts
    /// every inbound RST_STREAM, answered or not, so its limit is put out of any real server's
    /// reach; the bulk engine counts only the streams reset without an answer
    /// (``BulkEngine/Configuration/unansweredResetsPerSecond``).
    public struct HTTP2Limits: Sendable, Equatable {
        /// Inbound RST_STREAM frames tolerated within ``resetFrameWindow``.
        public var resetFrames: Int = 20_000
        /// The window for ``resetFrames``: one millisecond, so that only a flood trips it.
        public var resetFrameWindow: Double = 0.001
        /// Inbound control frames (SETTINGS, PING...) tolerated within ``controlFrameWindow``.
        /// APNs sends SETTINGS each time it lowers the stream limit after a rejection and raises
        /// it after an accepted notification: swift-nio-http2's 200 per 30 seconds would close
        /// a bulk run's connection after some hundred rejections.
        public var controlFrames: Int = 20_000
        /// The window for ``controlFrames``: one millisecond, so that only a flood trips it.
        public var controlFrameWindow: Double = 0.001
        /// Stream errors tolerated per one-second window.
        public var streamErrorsPerSecond: Int = 10_000
        /// Connection "glitches" (suspicious events) before the connection is closed. The
        /// budget never refills, so it must outlast the longest run.
        public var maximumGlitches: Int = Int.max
        /// Recently reset streams remembered, so that frames still in flight for them are
        /// ignored rather than treated as a protocol error.
        public var recentlyResetStreams: Int = 1_024
        public init() {}
        /// swift-nio-http2's own defaults, for tests that show why they are not used.
        public static var nioDefaults: HTTP2Limits {
            var limits = HTTP2Limits()
            limits.resetFrames = 200
            limits.resetFrameWindow = 30
            limits.streamErrorsPerSecond = 200
            limits.controlFrames = 200
            limits.controlFrameWindow = 30
            limits.maximumGlitches = 200
            limits.recentlyResetStreams = 32
            limits.useNIODefaultWindows = true
            return limits
        }
        var useNIODefaultWindows = false
    }

    /// HTTP/2 PING on a quiet connection (see ``KeepAliveHandler``).
    public struct KeepAlive: Sendable, Equatable {
        /// Seconds without a byte from the server before a PING is sent.
        public var interval: Double = 60
        /// Seconds the PING's ACK may take before the connection is closed as dead.
        public var timeout: Double = 20
        public init(interval: Double = 60, timeout: Double = 20) {
            self.interval = interval
            self.timeout = timeout
        }
    }

    public var endpoint: Endpoint
    public var credential: ClientCredential
    /// Extra trust roots (PEM or DER files), for a local gateway or a corporate proxy's CA.
    public var caFiles: [String] = []
    /// Whether the operating system's roots are trusted too (true unless told otherwise).
    public var trustSystemRoots = true
    /// A CA bundle (PEM) trusted in place of the operating system's roots; ``caFiles`` still
    /// add to it.
    public var caBundle: String?
    /// Connect over this address family only; nil: every address the name has, raced as
    /// Happy Eyeballs (RFC 8305) races them.
    public var addressFamily: AddressFamily?
    /// Addresses to use for a host and port instead of asking DNS (as curl's `--resolve`).
    public var fixedAddresses: [FixedAddress] = []
    /// An HTTP CONNECT proxy (`http://[user:password@]host:port`), as HTTPS_PROXY gives it.
    public var proxy: URL?
    /// Where ``proxy`` came from, in words an error can name (`HTTPS_PROXY`, `--proxy`).
    public var proxyOrigin: String?
    public var timeouts = Timeouts()
    public var http2Limits = HTTP2Limits()
    /// PINGs on a quiet connection; nil sends none.
    public var keepAlive: KeepAlive? = KeepAlive()

    /// This configuration for a connection that makes one exchange and closes (one notification,
    /// one broadcast): no PINGs. A quiet spell of ``KeepAlive/interval`` cannot happen before the
    /// request's own timeout, so the keep-alive's two handlers would only cost the connection's
    /// setup their first use.
    public var forOneExchange: GatewayConfiguration {
        var configuration = self
        configuration.keepAlive = nil
        return configuration
    }
    /// Dates provider tokens; tests inject their own.
    public var clock: GatewayClock = .system
    /// Provider tokens are renewed at this age (APNs wants 20 to 60 minutes).
    public var tokenRenewAfter: TimeInterval = 50 * 60

    public init(endpoint: Endpoint, credential: ClientCredential) {
        self.endpoint = endpoint
        self.credential = credential
    }
}
