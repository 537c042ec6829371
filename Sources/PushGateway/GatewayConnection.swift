import CredentialFormats
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import PushTransport
import X509

/// One HTTP/2 connection to an APNs-compatible gateway: TCP → TLS 1.2+ → ALPN h2 → HTTP/2,
/// then any number of notifications, each on its own stream of this same connection.
///
/// APNs treats reconnect storms as an attack, so callers keep one connection for many
/// notifications. Concurrency is bounded by the server's SETTINGS_MAX_CONCURRENT_STREAMS:
/// swift-nio-http2 holds back new streams above the server's current limit until others
/// finish, so sends above the limit wait rather than fail.
public final class GatewayConnection: Sendable {
    /// What the connection was made with.
    public let configuration: GatewayConfiguration
    let group: any EventLoopGroup
    let tokens: ProviderTokenCache?

    struct State {
        var channel: (any Channel)?
        var multiplexer: NIOHTTP2Handler.StreamMultiplexer?
        /// HTTP/2 is set up (with the multiplexer, or with ``frameStreams`` for a bulk run).
        var http2Ready = false
        var report: HandshakeReport
        var goAway: GatewayError.GoAwayInfo?
        var isClosed = false
        var connectStarted = false
        var closeDetail: String?
        var connectionError: String?
        /// A TLS error after the handshake (a server's alert refusing our certificate, with TLS 1.3).
        var tlsFailure: String?
        var maxConcurrentStreams: UInt32?
        var openStreams = 0
        var maxOpenStreams = 0
        var streamsOpened = 0
        var batching: BatchingHandler?
        var pingsSent = 0
        var pingsAnswered = 0
    }

    let state: NIOLockedValueBox<State>

    public convenience init(
        configuration: GatewayConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
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
    /// The bulk sender's streams (PushBulk's `FrameStreams`), written at the frame level instead
    /// of through swift-nio-http2's multiplexer: the handler goes after the HTTP/2 handler (nil
    /// for every other use: then each notification gets a stream channel).
    let frameStreams: (any ChannelHandler & Sendable)?

    package init(
        configuration: GatewayConfiguration,
        eventLoopGroup: any EventLoopGroup,
        tokenCache: ProviderTokenCache?,
        readComplete: (@Sendable () -> Void)? = nil,
        events: (@Sendable (ConnectionEvent) -> Void)? = nil,
        frameStreams: (any ChannelHandler & Sendable)? = nil
    ) {
        _ = BlockingWork.nioDetectorInstalled
        self.readComplete = readComplete
        self.frameStreams = frameStreams
        self.events = events
        self.group = eventLoopGroup
        self.configuration = configuration
        self.tokens =
            tokenCache
            ?? ProviderTokenCache(
                for: configuration.credential,
                clock: configuration.clock,
                renewAfter: configuration.tokenRenewAfter
            )
        var report = HandshakeReport(endpoint: configuration.endpoint)
        report.proxy = configuration.proxy.flatMap(Self.proxyDisplay)
        state = NIOLockedValueBox(State(report: report))
    }

    /// Connects and returns a connection ready to send.
    public static func connect(
        _ configuration: GatewayConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> GatewayConnection {
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
    package var batching: BatchingHandler? { state.withLockedValue { $0.batching } }

    /// Why the connection ended, in words ("by the server", "after the server's GOAWAY").
    var closeReason: String { state.withLockedValue { $0.closeDetail } ?? "unexpectedly" }

    /// Streams opened on this connection so far.
    public var streamsOpened: Int { state.withLockedValue { $0.streamsOpened } }

    /// The most streams this side had open at once (requests written and not yet answered).
    public var maxObservedConcurrentStreams: Int { state.withLockedValue { $0.maxOpenStreams } }

    /// PINGs sent on this quiet connection, and those the server answered.
    public var pings: (sent: Int, answered: Int) { state.withLockedValue { ($0.pingsSent, $0.pingsAnswered) } }

    /// Why the connection ended, in words, once it has.
    public var closedBecause: String? { state.withLockedValue { $0.isClosed ? $0.closeDetail : nil } }

    /// The GOAWAY the server sent, if it sent one.
    public var goAway: GatewayError.GoAwayInfo? { state.withLockedValue { $0.goAway } }

    /// True once connected and until closed by either side or told to go away.
    public var isUsable: Bool {
        state.withLockedValue { $0.http2Ready && !$0.isClosed && $0.goAway == nil }
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
            throw GatewayError(
                .notConnected,
                "This connection was already used; a GatewayConnection connects once.",
                hint: "Make a new GatewayConnection to connect again."
            )
        }
        let started = DispatchTime.now()
        var phase = "setup"
        do {
            let (sslContext, evaluator, trustSource) = try makeTLS()
            update { $0.report.trustSource = trustSource }

            let target = try connectTarget()
            phase = "dns"
            var mark = DispatchTime.now()
            let addresses = try await Resolver.resolve(
                host: target.host,
                port: target.port,
                timeout: Self.amount(configuration.timeouts.dns),
                family: configuration.addressFamily,
                fixed: configuration.fixedAddresses
            )
            let dnsDuration = Self.seconds(since: mark)
            update {
                $0.report.dnsDuration = dnsDuration
                $0.report.resolvedAddresses = addresses.map(\.displayString)
            }

            phase = "tcp"
            mark = DispatchTime.now()
            let (channel, address) = try await connectTCP(addresses, host: target.host, port: target.port)
            let tcpDuration = Self.seconds(since: mark)
            update {
                $0.channel = channel
                $0.report.tcpConnectDuration = tcpDuration
                $0.report.resolvedAddress = address.displayString
                $0.report.addressFamily = AddressFamily(of: address)?.rawValue
            }

            if let proxy = configuration.proxy {
                phase = "proxy"
                mark = DispatchTime.now()
                try await ProxyTunnel.open(
                    on: channel,
                    to: configuration.endpoint,
                    proxy: proxy,
                    timeout: Self.amount(configuration.timeouts.connect)
                )
                let proxyDuration = Self.seconds(since: mark)
                update { $0.report.proxyConnectDuration = proxyDuration }
            }

            phase = "tls"
            try await handshake(
                channel: channel,
                sslContext: sslContext,
                evaluator: evaluator,
                address: address,
                onTLSDone: { phase = "http2" }
            )
            let total = Self.seconds(since: started)
            return update {
                $0.report.totalDuration = total
                return $0.report
            }
        } catch {
            let address = state.withLockedValue { $0.report.resolvedAddress } ?? configuration.endpoint.host
            var gatewayError = error as? GatewayError ?? Self.setUpFailure(error, phase: phase, address: address)
            if let proxy = configuration.proxy {
                gatewayError = Self.throughProxy(
                    gatewayError,
                    proxy: proxy,
                    origin: configuration.proxyOrigin,
                    phase: phase
                )
            }
            let channel: (any Channel)? = update { state in
                state.report.failedPhase = phase
                state.report.error = gatewayError
                state.report.totalDuration = Self.seconds(since: started)
                state.isClosed = true
                return state.channel
            }
            try? await channel?.close()
            throw gatewayError
        }
    }

    /// A failure while setting the connection up that no phase named: the server closing the
    /// connection under us (NIO's "I/O on closed channel") says so, with the phase it was in.
    static func setUpFailure(_ error: any Error, phase: String, address: String) -> GatewayError {
        if let channelError = error as? ChannelError,
            channelError == .ioOnClosedChannel || channelError == .alreadyClosed
        {
            let when =
                switch phase {
                case "tls": "before the TLS handshake could begin"
                case "http2": "right after the TLS handshake, before HTTP/2 started"
                default: "while connecting"
                }
            return GatewayError(
                .connectionClosed,
                "The server at \(address) closed the connection \(when).",
                hint:
                    "A busy or stopping server closes connections it cannot serve in time; connect again, and if it keeps happening check the server's own limits (handshake timeout, connection limit).",
                isRetryable: true,
                server: address
            )
        }
        return GatewayError(
            .connectFailed,
            "Connecting to \(address) failed: \(UserFacing.describe(error)).",
            server: address
        )
    }

    /// A failure on a connection through a proxy names the proxy and where it came from: before
    /// the tunnel is open the failure is the proxy's, not the gateway's. The error keeps its
    /// subject and the place it was made.
    static func throughProxy(_ error: GatewayError, proxy: URL, origin: String?, phase: String) -> GatewayError {
        let name = proxyDisplay(proxy) ?? proxy.absoluteString
        let from = origin.map { " (from \($0))" } ?? ""
        switch phase {
        case "dns", "tcp", "proxy":
            let message =
                error.code == .proxyFailed ? error.message : "Connecting to the proxy failed: \(error.message)"
            return GatewayError(
                error.code,
                "Through the proxy \(name)\(from): \(message)",
                hint:
                    "Check the proxy's address, port and credentials\(from.isEmpty ? "" : ", set in \(origin!)"), or connect without the proxy.",
                isRetryable: error.isRetryable,
                path: error.path,
                server: error.server,
                trustFile: error.trustFile,
                family: error.family,
                file: error.file,
                line: error.line
            )
        default:
            return GatewayError(
                error.code,
                error.message + " (connected through the proxy \(name)\(from))",
                hint: error.hint,
                isRetryable: error.isRetryable,
                path: error.path,
                server: error.server,
                trustFile: error.trustFile,
                family: error.family,
                file: error.file,
                line: error.line
            )
        }
    }

    /// Tells the server this side is going away (GOAWAY, NO_ERROR): it opens no more streams,
    /// and the server may still answer those in flight.
    package func sendGoAway() {
        guard let channel = state.withLockedValue({ $0.channel }) else { return }
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil)
        )
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
package enum ConnectionEvent: Sendable {
    case settings(maxConcurrentStreams: Int?)
    case goAway(lastStreamID: Int)
    case closed
}

/// A promise that may be completed from any thread, and only once; later completions are
/// ignored (a timeout racing an answer).
typealias OncePromise<Value: Sendable> = Once<Result<Value, any Error>>
