import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import PushCredentials
import X509

/// How to reach a gateway and who to be there.
public struct GatewayConfiguration: Sendable {
    /// Each phase of connecting has its own limit, so a failure names the phase that hung.
    public struct Timeouts: Sendable {
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
    public struct HTTP2Limits: Sendable {
        /// Inbound RST_STREAM frames tolerated within ``resetFrameWindow``.
        public var resetFrames: Int = 20_000
        /// The window for ``resetFrames``: one millisecond, so that only a flood trips it.
        public var resetFrameWindow: Double = 0.001
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
            limits.maximumGlitches = 200
            limits.recentlyResetStreams = 32
            limits.useNIODefaultWindows = true
            return limits
        }
        var useNIODefaultWindows = false
    }

    public var endpoint: Endpoint
    public var credential: ClientCredential
    /// Extra trust roots (PEM or DER files), for a local gateway or a corporate proxy's CA.
    public var caFiles: [String] = []
    /// Whether the operating system's roots are trusted too (true unless told otherwise).
    public var trustSystemRoots = true
    /// An HTTP CONNECT proxy (`http://[user:password@]host:port`), as HTTPS_PROXY gives it.
    public var proxy: URL?
    public var timeouts = Timeouts()
    public var http2Limits = HTTP2Limits()
    /// Dates provider tokens; tests inject their own.
    public var clock: GatewayClock = .system
    /// Provider tokens are renewed at this age (APNs wants 20 to 60 minutes).
    public var tokenRenewAfter: TimeInterval = 50 * 60

    public init(endpoint: Endpoint, credential: ClientCredential) {
        self.endpoint = endpoint
        self.credential = credential
    }
}

/// One HTTP/2 connection to an APNs-compatible gateway: TCP → TLS 1.2+ → ALPN h2 → HTTP/2,
/// then any number of notifications, each on its own stream of this same connection.
///
/// APNs treats reconnect storms as an attack, so callers keep one connection for many
/// notifications. Concurrency is bounded by the server's SETTINGS_MAX_CONCURRENT_STREAMS:
/// swift-nio-http2 holds back new streams above the server's current limit until others
/// finish, so sends above the limit wait rather than fail.
public final class GatewayConnection: Sendable {
    public let configuration: GatewayConfiguration
    let group: any EventLoopGroup
    let tokens: ProviderTokenCache?

    struct State {
        var channel: (any Channel)?
        var multiplexer: NIOHTTP2Handler.StreamMultiplexer?
        var report: HandshakeReport
        var goAway: GatewayError.GoAwayInfo?
        var isClosed = false
        var connectStarted = false
        var closeDetail: String?
        var connectionError: String?
        var maxConcurrentStreams: UInt32?
        var openStreams = 0
        var maxOpenStreams = 0
        var streamsOpened = 0
        var batching: BatchingHandler?
    }

    let state: NIOLockedValueBox<State>

    public convenience init(configuration: GatewayConfiguration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.init(configuration: configuration, eventLoopGroup: eventLoopGroup, tokenCache: nil)
    }

    /// `tokenCache`: a provider-token cache shared with other connections of the same key, so
    /// reconnecting does not sign a new token (APNs refuses more than one new token every 20 minutes).
    /// Called on the event loop at the end of each batch of reads, before swift-nio-http2 flushes
    /// what was written during them: the bulk sender opens its next streams there, so that many
    /// requests leave in one TLS record and one system call.
    let readComplete: (@Sendable () -> Void)?
    /// Called on the event loop when the server's SETTINGS change its stream limit, when it
    /// sends GOAWAY, and when the connection ends (the bulk sender's engine hears of each).
    let events: (@Sendable (ConnectionEvent) -> Void)?

    init(configuration: GatewayConfiguration, eventLoopGroup: any EventLoopGroup, tokenCache: ProviderTokenCache?,
         readComplete: (@Sendable () -> Void)? = nil, events: (@Sendable (ConnectionEvent) -> Void)? = nil) {
        self.readComplete = readComplete
        self.events = events
        self.configuration = configuration
        self.group = eventLoopGroup
        if case .token(let key) = configuration.credential {
            tokens = tokenCache ?? ProviderTokenCache(key: key, clock: configuration.clock, renewAfter: configuration.tokenRenewAfter)
        } else {
            tokens = nil
        }
        var report = HandshakeReport(endpoint: configuration.endpoint)
        report.proxy = configuration.proxy.flatMap(Self.proxyDisplay)
        state = NIOLockedValueBox(State(report: report))
    }

    /// Connects and returns a connection ready to send.
    public static func connect(_ configuration: GatewayConfiguration,
                               eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> GatewayConnection {
        let connection = GatewayConnection(configuration: configuration, eventLoopGroup: eventLoopGroup)
        _ = try await connection.connect()
        return connection
    }

    /// What connecting found out, phase by phase; also filled in (with ``HandshakeReport/failedPhase``)
    /// when connecting failed.
    public var handshakeReport: HandshakeReport { state.withLockedValue { $0.report } }

    /// The server's current SETTINGS_MAX_CONCURRENT_STREAMS (nil before SETTINGS or when unlimited).
    public var maxConcurrentStreams: Int? { state.withLockedValue { $0.maxConcurrentStreams.map(Int.init) } }

    /// The bulk sender's flush batching (on the event loop only).
    var batching: BatchingHandler? { state.withLockedValue { $0.batching } }

    /// The HTTP/2 stream multiplexer, once connected.
    var streamMultiplexer: NIOHTTP2Handler.StreamMultiplexer? { state.withLockedValue { $0.multiplexer } }

    /// Streams opened on this connection so far.
    public var streamsOpened: Int { state.withLockedValue { $0.streamsOpened } }

    /// The most streams this side had open at once (requests written and not yet answered).
    public var maxObservedConcurrentStreams: Int { state.withLockedValue { $0.maxOpenStreams } }

    /// The GOAWAY the server sent, if it sent one.
    public var goAway: GatewayError.GoAwayInfo? { state.withLockedValue { $0.goAway } }

    /// True once connected and until closed by either side or told to go away.
    public var isUsable: Bool {
        state.withLockedValue { $0.multiplexer != nil && !$0.isClosed && $0.goAway == nil }
    }

    // MARK: Connecting

    /// Runs every phase of the handshake. Throws a ``GatewayError`` naming the phase that
    /// failed; ``handshakeReport`` then says how far it got.
    @discardableResult
    public func connect() async throws -> HandshakeReport {
        let alreadyStarted = update { state -> Bool in
            defer { state.connectStarted = true }
            return state.connectStarted || state.isClosed
        }
        guard !alreadyStarted else {
            throw GatewayError(.notConnected, "This connection was already used; a GatewayConnection connects once.",
                               hint: "Make a new GatewayConnection to connect again.")
        }
        let started = DispatchTime.now()
        var phase = "setup"
        do {
            let (sslContext, evaluator, trustSource) = try makeTLS()
            update { $0.report.trustSource = trustSource }

            let target = try connectTarget()
            phase = "dns"
            var mark = DispatchTime.now()
            let addresses = try await Resolver.resolve(host: target.host, port: target.port, timeout: Self.amount(configuration.timeouts.dns))
            let dnsDuration = Self.seconds(since: mark)
            update {
                $0.report.dnsDuration = dnsDuration
                $0.report.resolvedAddresses = addresses.map(\.displayString)
            }

            phase = "tcp"
            mark = DispatchTime.now()
            let (channel, address) = try await connectTCP(addresses)
            let tcpDuration = Self.seconds(since: mark)
            update {
                $0.channel = channel
                $0.report.tcpConnectDuration = tcpDuration
                $0.report.resolvedAddress = address.displayString
            }

            if let proxy = configuration.proxy {
                phase = "proxy"
                mark = DispatchTime.now()
                try await ProxyTunnel.open(on: channel, to: configuration.endpoint, proxy: proxy,
                                           timeout: Self.amount(configuration.timeouts.connect))
                let proxyDuration = Self.seconds(since: mark)
                update { $0.report.proxyConnectDuration = proxyDuration }
            }

            phase = "tls"
            try await handshake(channel: channel, sslContext: sslContext, evaluator: evaluator, address: address,
                                onTLSDone: { phase = "http2" })
            let total = Self.seconds(since: started)
            return update {
                $0.report.totalDuration = total
                return $0.report
            }
        } catch {
            let gatewayError = error as? GatewayError ?? GatewayError(.connectFailed, "Connecting failed: \(error).")
            let channel: (any Channel)? = update { state in
                state.report.failedPhase = phase
                state.report.error = gatewayError.message
                state.report.errorCode = gatewayError.code
                state.report.totalDuration = Self.seconds(since: started)
                state.isClosed = true
                return state.channel
            }
            try? await channel?.close()
            throw gatewayError
        }
    }

    /// Sends one notification on a new stream of this connection and waits for the answer.
    ///
    /// A rejection is not an error: it comes back as a ``PushResponse`` with its status and
    /// reason. Throws ``GatewayError`` only when no answer came (closed connection, GOAWAY,
    /// timeout); ``GatewayError/isRetryable`` says whether the server did not process it.
    public func send(_ notification: PushNotification) async throws -> PushResponse {
        do {
            try notification.validate()
        } catch let error as PushCoreError {
            throw GatewayError(.invalidNotification, error.message, hint: error.hint)
        }
        let encoder = RequestEncoder(template: notification.template, authority: authority)
        return try await send(encoder.headers(for: notification, bearer: try bearer()), body: notification.payload)
    }

    /// Sends a request exactly as given, plus `authorization` for token authentication. For
    /// tests that must send what ``PushNotification`` refuses to build (a wrong method, a
    /// duplicate header, an oversized payload).
    func send(headers given: [(String, String)], body: [UInt8]) async throws -> PushResponse {
        var headers = given.map { RequestEncoder.Header($0.0, $0.1) }
        if let bearer = try bearer() { headers.append(RequestEncoder.Header(APNsHeader.authorization, "bearer " + bearer)) }
        return try await send(headers, body: body)
    }

    /// The provider token for the next request (nil with certificate authentication).
    func bearer() throws -> String? {
        guard let tokens else { return nil }
        do {
            return try tokens.token()
        } catch {
            throw GatewayError(.invalidCredential, "The provider token cannot be signed.",
                               hint: "Check the .p8 key file is an EC P-256 key.")
        }
    }

    private func send(_ headers: [RequestEncoder.Header], body: [UInt8]) async throws -> PushResponse {
        let (multiplexer, goAway, closed) = state.withLockedValue { ($0.multiplexer, $0.goAway, $0.isClosed) }
        if let goAway { throw GatewayError.goAway(goAway, processed: false) }
        guard let multiplexer, !closed else {
            if closed, let detail = state.withLockedValue({ $0.closeDetail }) { throw GatewayError.connectionClosed(detail) }
            throw GatewayError.notConnected
        }
        let request = StreamRequest(headers: HPACKHeaders(encoded: headers), body: body.isEmpty ? nil : ByteBuffer(bytes: body),
                                    timeout: Self.amount(configuration.timeouts.request),
                                    timeoutSeconds: configuration.timeouts.request)
        let result = OncePromise<PushResponse>()
        open(request, on: multiplexer) { outcome, _ in result.complete(outcome.mapError { $0 }) }
        return try await result.value
    }

    /// Opens a stream for `request`; `completion` runs exactly once, on the connection's event loop.
    func open(_ request: StreamRequest, on multiplexer: NIOHTTP2Handler.StreamMultiplexer,
              completion: @escaping StreamCompletion) {
        let connection = self
        let once = StreamCompletionOnce(completion)
        multiplexer.createStreamChannel { streamChannel in
            streamChannel.eventLoop.makeCompletedFuture {
                try streamChannel.pipeline.syncOperations.addHandler(
                    StreamHandler(request: request, connection: connection, completion: once.call))
            }
        }.whenFailure { error in
            once.call(.failure(GatewayError.connectionClosed("before the stream could open (\(error))")), false)
        }
    }

    /// Tells the server this side is going away (GOAWAY, NO_ERROR): it opens no more streams,
    /// and the server may still answer those in flight.
    func sendGoAway() {
        guard let channel = state.withLockedValue({ $0.channel }) else { return }
        let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
        channel.writeAndFlush(frame, promise: nil)
    }

    /// Closes the connection. Streams still waiting fail with ``GatewayError/Code/connectionClosed``.
    public func close() async {
        let channel = update { state -> (any Channel)? in
            if state.closeDetail == nil { state.closeDetail = "because it was closed on this side" }
            state.isClosed = true
            return state.channel
        }
        try? await channel?.close()
    }

    // MARK: Phases

    /// The host and port TCP connects to: the proxy's when there is one.
    private func connectTarget() throws -> (host: String, port: Int) {
        guard let proxy = configuration.proxy else { return (configuration.endpoint.host, configuration.endpoint.port) }
        guard let host = proxy.host, !host.isEmpty else {
            throw GatewayError(.proxyFailed, "The proxy URL has no host.", hint: "Write HTTPS_PROXY as http://host:port.")
        }
        return (host, proxy.port ?? (proxy.scheme == "https" ? 443 : 80))
    }

    private func connectTCP(_ addresses: [SocketAddress]) async throws -> (any Channel, SocketAddress) {
        let timeout = configuration.timeouts.connect
        var lastError: GatewayError?
        // Addresses in the resolver's order; the first that answers wins.
        for address in addresses {
            let bootstrap = ClientBootstrap(group: group)
                .connectTimeout(Self.amount(timeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
            do {
                let channel = try await bootstrap.connect(to: address).get()
                return (channel, address)
            } catch let error as ChannelError where error == .connectTimeout(Self.amount(timeout)) {
                lastError = .connectTimeout(address.displayString, seconds: timeout)
            } catch let error as IOError where error.errnoCode == ECONNREFUSED {
                lastError = lastError ?? .connectionRefused(address.displayString)
            } catch let error as NIOConnectionError {
                lastError = Self.classify(error, address: address, timeout: timeout)
            } catch {
                if case ChannelError.connectTimeout = error {
                    lastError = .connectTimeout(address.displayString, seconds: timeout)
                } else if let io = error as? IOError, io.errnoCode == ECONNREFUSED {
                    lastError = .connectionRefused(address.displayString)
                } else {
                    lastError = GatewayError(.connectFailed, "Connecting to \(address.displayString) failed: \(error).",
                                             hint: "Check the network route to the gateway.", isRetryable: true)
                }
            }
        }
        throw lastError ?? GatewayError(.connectFailed, "No address to connect to.")
    }

    private static func classify(_ error: NIOConnectionError, address: SocketAddress, timeout: Double) -> GatewayError {
        for failure in error.connectionErrors.map(\.error) {
            if let io = failure as? IOError, io.errnoCode == ECONNREFUSED { return .connectionRefused(address.displayString) }
            if case ChannelError.connectTimeout = failure { return .connectTimeout(address.displayString, seconds: timeout) }
        }
        return GatewayError(.connectFailed, "Connecting to \(address.displayString) failed: \(error).", isRetryable: true)
    }

    /// TLS, then HTTP/2 up to the server's first SETTINGS frame. HTTP/2 is configured from
    /// inside the handshake-completed event, before swift-nio-ssl hands over any bytes that
    /// arrived with the server's Finished, so the server's SETTINGS cannot be lost.
    private func handshake(channel: any Channel, sslContext: NIOSSLContext, evaluator: ServerTrustEvaluator,
                           address: SocketAddress, onTLSDone: () -> Void) async throws {
        let host = configuration.endpoint.host
        let isIP = ServerTrustEvaluator.isIPAddress(host)
        let tlsResult = OncePromise<String?>()
        let settingsResult = OncePromise<Void>()
        let connection = self
        let limits = configuration.http2Limits
        let tlsStart = DispatchTime.now()
        let tlsTimeout = configuration.timeouts.tls
        let http2Timeout = configuration.timeouts.http2
        let addressText = address.displayString

        try await channel.eventLoop.submit {
            let tls = try NIOSSLClientHandler(context: sslContext, serverHostname: isIP ? nil : host,
                                              customVerificationCallback: { certificates, promise in
                                                  evaluator.verify(certificates, promise: promise)
                                              })
            let observer = TLSObserver(result: tlsResult) { context, alpn in
                guard alpn == nil || alpn == "h2" else { throw GatewayError.alpnRejected(alpn ?? "") }
                if let hook = connection.readComplete {
                    // Between TLS and HTTP/2: it sees the end of reads first and every flush.
                    let batching = BatchingHandler(readComplete: hook)
                    try context.pipeline.syncOperations.addHandler(batching)
                    connection.update { $0.batching = batching }
                }
                let multiplexer = try context.pipeline.syncOperations.configureHTTP2Pipeline(
                    mode: .client,
                    connectionConfiguration: Self.connectionConfiguration(limits),
                    streamConfiguration: Self.streamConfiguration(limits),
                    inboundStreamInitializer: { stream in stream.close() })  // APNs never pushes
                try context.pipeline.syncOperations.addHandler(
                    ConnectionObserver(connection: connection, settings: settingsResult))
                connection.update { $0.multiplexer = multiplexer }
            }
            try channel.pipeline.syncOperations.addHandlers([tls, observer])
            channel.eventLoop.scheduleTask(in: Self.amount(tlsTimeout)) {
                if tlsResult.complete(.failure(GatewayError.tlsTimeout(addressText, seconds: tlsTimeout))) {
                    channel.close(promise: nil)
                }
            }
        }.get()

        let alpn: String?
        do {
            alpn = try await tlsResult.value
        } catch {
            let outcome = evaluator.outcome
            update {
                $0.report.tlsHandshakeDuration = Self.seconds(since: tlsStart)
                $0.report.serverCertificates = outcome.presented
                $0.report.trust = outcome.verdict
                $0.report.trustDetail = outcome.detail
            }
            throw tlsError(error, outcome: outcome, address: addressText)
        }
        let tlsDone = DispatchTime.now()
        let version = try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).tlsVersion
        }.get()
        let outcome = evaluator.outcome
        update {
            $0.report.tlsHandshakeDuration = Self.seconds(since: tlsStart, until: tlsDone)
            $0.report.alpn = alpn
            $0.report.tlsVersion = version.flatMap { $0 }.map(Self.name)
            $0.report.serverCertificates = outcome.presented
            $0.report.trust = outcome.verdict
            $0.report.trustDetail = outcome.detail
        }
        onTLSDone()

        channel.eventLoop.scheduleTask(in: Self.amount(http2Timeout)) {
            if settingsResult.complete(.failure(GatewayError.http2Timeout(addressText, seconds: http2Timeout))) {
                channel.close(promise: nil)
            }
        }
        try await settingsResult.value
        update { $0.report.http2ReadyDuration = Self.seconds(since: tlsDone) }
    }

    private func tlsError(_ error: any Error, outcome: ServerTrustEvaluator.Outcome, address: String) -> GatewayError {
        if let gatewayError = error as? GatewayError { return gatewayError }
        let host = configuration.endpoint.host
        switch outcome.verdict {
        case .untrusted:
            return GatewayError(.tlsUntrusted,
                                "The server's certificate chain is not trusted: \(outcome.detail ?? "no trusted root").",
                                hint: "APNs moved to the \"USERTrust RSA Certification Authority\" root in 2025 (sandbox in January, production on 24 February); this machine's trust store may lack it: update the ca-certificates package, or give the root with --ca. For a local gateway, give its CA with --ca.")
        case .hostnameMismatch:
            return GatewayError(.tlsHostnameMismatch,
                                "The server's certificate is not valid for \(host): \(outcome.detail ?? "the names differ").",
                                hint: "Connect with a name the certificate lists (for a local gateway: localhost or 127.0.0.1), or check that DNS or a proxy is not sending you elsewhere.")
        case .expired:
            return GatewayError(.tlsCertificateExpired, "The server's certificate is not valid now: \(outcome.detail ?? "expired").",
                                hint: "Check this machine's clock; if it is right, the server's certificate must be renewed.")
        case .trusted, .notChecked:
            break
        }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return GatewayError(.tlsHostnameMismatch, "The server's certificate is not valid for \(host).",
                                hint: "Connect with a name the certificate lists.")
        }
        if let closed = error as? TLSObserver.ClosedDuringHandshake {
            return GatewayError(.tlsServerClosed, "The server at \(address) closed the connection during the TLS handshake\(closed.detail.map { " (\($0))" } ?? "").",
                                hint: "A server that requires a client certificate closes like this when it rejects ours; also check the port speaks TLS.",
                                isRetryable: true)
        }
        if let ssl = error as? NIOSSLError {
            switch ssl {
            case .uncleanShutdown:
                return GatewayError(.tlsServerClosed, "The server at \(address) closed the connection during the TLS handshake.",
                                    hint: "A server that requires a client certificate closes like this when it rejects ours.", isRetryable: true)
            case .handshakeFailed(let inner):
                return GatewayError(.tlsHandshakeFailed, "The TLS handshake with \(address) failed: \(inner).",
                                    hint: Self.handshakeHint(String(describing: inner)))
            default:
                break
            }
        }
        return GatewayError(.tlsHandshakeFailed, "The TLS handshake with \(address) failed: \(error).",
                            hint: Self.handshakeHint(String(describing: error)))
    }

    private static func handshakeHint(_ text: String) -> String {
        let lower = text.lowercased()
        if lower.contains("certificate_required") || lower.contains("bad_certificate") || lower.contains("unknown_ca")
            || lower.contains("certificate_unknown") || lower.contains("handshake_failure") {
            return "The server rejected the client certificate: check it is a push certificate for this gateway's environment and that it has not expired or been revoked."
        }
        if lower.contains("protocol_version") || lower.contains("wrong_version") {
            return "The server does not speak TLS 1.2 or newer, or this port is not a TLS port."
        }
        return "Run with --verbose to see the handshake report."
    }

    // MARK: Configuration helpers

    private func makeTLS() throws -> (NIOSSLContext, ServerTrustEvaluator, HandshakeReport.TrustSource) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        tls.certificateVerification = .fullVerification
        if case .certificate(let der, let chain, let key) = configuration.credential {
            do {
                tls.certificateChain = try ([der] + chain).map { .certificate(try NIOSSLCertificate(bytes: $0, format: .der)) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: key.bytes, format: .der))
            } catch {
                // The key's bytes never go into the message.
                throw GatewayError(.invalidCredential, "The client certificate or its private key cannot be loaded for TLS.",
                                   hint: "Check the file with `apnsctl inspect`; the key must belong to the certificate.")
            }
        }
        let custom = try ServerTrustEvaluator.loadCertificates(paths: configuration.caFiles)
        let roots: CertificateStore
        let source: HandshakeReport.TrustSource
        if configuration.trustSystemRoots {
            roots = custom.isEmpty ? CertificateStore.systemTrustRoots : CertificateStore.systemTrustRoots.appending(contentsOf: custom)
            source = custom.isEmpty ? .system : .systemAndCustom
        } else {
            roots = CertificateStore(custom)
            source = .custom
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw GatewayError(.invalidCredential, "The TLS settings cannot be used: the private key may not match the certificate.",
                               hint: "Check the file with `apnsctl inspect`.")
        }
        return (context, ServerTrustEvaluator(host: configuration.endpoint.host, roots: roots, clock: configuration.clock), source)
    }

    static func connectionConfiguration(_ limits: GatewayConfiguration.HTTP2Limits) -> NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
        ]
        configuration.maximumConnectionGlitches = limits.maximumGlitches
        configuration.maximumRecentlyResetStreams = limits.recentlyResetStreams
        return configuration
    }

    static func streamConfiguration(_ limits: GatewayConfiguration.HTTP2Limits) -> NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        if !limits.useNIODefaultWindows {
            configuration.streamResetFrameRateLimit.maximumCount = limits.resetFrames
            configuration.streamResetFrameRateLimit.windowLength = Self.amount(limits.resetFrameWindow)
            configuration.streamErrorRateLimit.maximumCount = limits.streamErrorsPerSecond
            configuration.streamErrorRateLimit.windowLength = .seconds(1)
        }
        return configuration
    }

    /// `:authority`: the host, with the port when it is not 443.
    var authority: String { RequestEncoder.authority(host: configuration.endpoint.host, port: configuration.endpoint.port) }

    @discardableResult
    func update<T>(_ body: (inout State) -> T) -> T { state.withLockedValue(body) }

    static func amount(_ seconds: Double) -> TimeAmount { .nanoseconds(Int64(seconds * 1e9)) }

    static func seconds(since start: DispatchTime, until end: DispatchTime = .now()) -> Double {
        Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    static func name(_ version: TLSVersion) -> String {
        switch version {
        case .tlsv1: "TLSv1"
        case .tlsv11: "TLSv1.1"
        case .tlsv12: "TLSv1.2"
        case .tlsv13: "TLSv1.3"
        }
    }

    /// `host:port` of a proxy URL, without user or password.
    static func proxyDisplay(_ url: URL) -> String? {
        guard let host = url.host else { return nil }
        return "\(host):\(url.port ?? (url.scheme == "https" ? 443 : 80))"
    }

    // MARK: Called by the channel handlers

    func streamOpened() {
        update {
            $0.openStreams += 1
            $0.streamsOpened += 1
            $0.maxOpenStreams = max($0.maxOpenStreams, $0.openStreams)
        }
    }

    func streamFinished() { update { $0.openStreams -= 1 } }
}

/// What a connection tells its owner as it happens.
enum ConnectionEvent: Sendable {
    case settings(maxConcurrentStreams: Int?)
    case goAway(lastStreamID: Int)
    case closed
}

/// A promise that may be completed from any thread, and only once; later completions are
/// ignored (a timeout racing an answer).
final class OncePromise<Value: Sendable>: Sendable {
    private let box = NIOLockedValueBox<(result: Result<Value, any Error>?, waiter: CheckedContinuation<Value, any Error>?)>((nil, nil))

    /// Returns false when it was already completed.
    @discardableResult
    func complete(_ result: Result<Value, any Error>) -> Bool {
        let waiter: CheckedContinuation<Value, any Error>?? = box.withLockedValue { state in
            guard state.result == nil else { return .none }
            state.result = result
            defer { state.waiter = nil }
            return .some(state.waiter)
        }
        guard case .some(let continuation) = waiter else { return false }
        continuation?.resume(with: result)
        return true
    }

    var isCompleted: Bool { box.withLockedValue { $0.result != nil } }

    var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<Value, any Error>? = box.withLockedValue { state in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}

extension HPACKHeaders {
    /// The request encoder's headers, with its indexing advice.
    init(encoded headers: [RequestEncoder.Header]) {
        self.init()
        reserveCapacity(headers.count)
        for header in headers {
            add(name: header.name, value: header.value, indexing: header.indexable ? .indexable : .nonIndexable)
        }
    }
}
