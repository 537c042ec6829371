import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PushCore
import PushGateway
import PushTeam
import PushTransport

/// A long-running HTTP/1.1 endpoint for Prometheus: `/metrics` (the check series, recomputed at
/// most once per interval) and `/probe` (a handshake and auth check, in blackbox_exporter's names).
/// A library type, so that a Swift server can embed it.
public final class MetricsExporter: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var check: StoreCheck
        /// The least time between two reads of the store (its check); scrapes and probes in
        /// between are served from the last one.
        public var storeRefresh: Double
        /// x509-certificate-exporter's names and optional series.
        public var x509: X509Exposition
        public var probe: ProbeSettings
        public var limits: ExporterLimits
        /// TLS and basic authentication, in exporter-toolkit's format; nil serves plain HTTP
        /// to anyone who can connect.
        public var webConfig: WebConfig?

        public init(
            host: String = "127.0.0.1",
            port: Int,
            check: StoreCheck,
            storeRefresh: Double = 60,
            x509: X509Exposition = X509Exposition(),
            probe: ProbeSettings,
            limits: ExporterLimits = ExporterLimits(),
            webConfig: WebConfig? = nil
        ) {
            self.host = host
            self.port = port
            self.check = check
            self.storeRefresh = storeRefresh
            self.x509 = x509
            self.probe = probe
            self.limits = limits
            self.webConfig = webConfig
        }

        /// Whether `host` is reachable from this machine only.
        public var listensOnLoopback: Bool {
            ["127.0.0.1", "::1", "localhost"].contains(host) || host.hasPrefix("127.")
        }

        /// What anyone who can reach the address gets, when it is not loopback and no web
        /// configuration guards it; nil otherwise.
        public var exposureWarning: String? {
            guard !listensOnLoopback, webConfig?.requiresAuthentication != true else { return nil }
            let what =
                "the store's aliases, topics and certificate expiry (/metrics) and probes of its credentials against APNs (/probe)"
            if webConfig?.tls != nil {
                return
                    "listening on \(host) with TLS but no basic_auth_users nor required client certificate: anyone who can connect gets \(what)."
            }
            return "listening on \(host) over plain HTTP with no authentication: anyone who can connect gets \(what)."
        }
    }

    public let configuration: Configuration
    /// The connections held at most: ``ExporterLimits/maxConnections``, lowered when the
    /// process may not open that many descriptors (the soft limit is raised first, up to the
    /// hard one), so that accepting never fails for want of one.
    public let connectionCap: Int
    let router: ExporterRouter
    let registry: ConnectionRegistry
    private let group: MultiThreadedEventLoopGroup
    /// Bcrypts: blocking work, kept off the event loop and the actors (the store's checks and
    /// credential loads wait on the libraries' own ``BlockingPool``).
    private let threadPool: NIOThreadPool
    private let serverChannel = NIOLockedValueBox<(any Channel)?>(nil)

    public init(configuration: Configuration, log: @escaping @Sendable (String) -> Void = { _ in }) {
        _ = BlockingWork.nioDetectorInstalled
        self.configuration = configuration
        threadPool = NIOThreadPool(numberOfThreads: 2)
        threadPool.start()
        let checks = CheckCache(check: configuration.check, interval: configuration.storeRefresh)
        router = ExporterRouter(
            checks: checks,
            probes: ProbeService(
                store: configuration.check.store,
                settings: configuration.probe,
                log: log,
                index: { await checks.index() }
            ),
            x509: configuration.x509,
            basicAuth: configuration.webConfig?.basicAuth,
            threadPool: threadPool
        )
        connectionCap = DescriptorBudget.connectionCap(for: configuration.limits.maxConnections)
        registry = ConnectionRegistry(capacity: connectionCap)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// What to say at start when ``connectionCap`` is below the configured maximum; nil when
    /// it is not.
    public var connectionCapNote: String? {
        let wanted = configuration.limits.maxConnections
        guard connectionCap < wanted else { return nil }
        let limit = DescriptorBudget.openFileLimit.map { " (ulimit -n: \($0))" } ?? ""
        return
            "holding at most \(connectionCap) connections, not \(wanted): the process may not open more files\(limit). To hold \(wanted), raise the limit where it is started: ulimit -n \(wanted + DescriptorBudget.reserve) in its shell, or LimitNOFILE=\(wanted + DescriptorBudget.reserve) in its systemd unit."
    }

    /// Listens, calls `onStart` with the bound port, and serves until ``stop()``.
    public func run(onStart: @Sendable (Int) -> Void = { _ in }) async throws {
        let registry = self.registry
        let limits = configuration.limits
        let tls = configuration.webConfig?.serverContext
        let server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
        do {
            server = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 256)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.configure(channel, registry: registry, limits: limits, tls: tls)
                    }
                }
        } catch {
            await shutdown()
            throw error
        }
        serverChannel.withLockedValue { $0 = server.channel }
        onStart(server.channel.localAddress?.port ?? configuration.port)
        let router = self.router
        // The first read of the store, so that /readyz says ready before the first scrape.
        let firstRead = Task { [checks = router.checks] in _ = await checks.current() }
        defer { firstRead.cancel() }
        try await withThrowingDiscardingTaskGroup { connections in
            try await server.executeThenClose { inbound in
                for try await connection in inbound {
                    connections.addTask { await Self.serve(connection, router: router) }
                }
            }
            // Prometheus keeps its connections open: a stop closes them.
            connections.cancelAll()
        }
        await shutdown()
    }

    private func shutdown() async {
        try? await group.shutdownGracefully()
        // A decryption's age (or a git) that does not end would hold a pool thread, and the
        // pool's shutdown with it: the children are ended, their runs fail and are reaped.
        ChildPrograms.stopAll()
        try? await threadPool.shutdownGracefully()
    }

    /// Stops listening, and ends the programs (age, git) the exporter's checks still wait for;
    /// ``run(onStart:)`` then returns.
    public func stop() {
        let channel = serverChannel.withLockedValue { $0 }
        channel?.close(promise: nil)
        ChildPrograms.stopAll()
    }

    /// A new connection's pipeline: the cap, the timeouts, TLS when configured, HTTP/1.1.
    static func configure(
        _ channel: any Channel,
        registry: ConnectionRegistry,
        limits: ExporterLimits,
        tls: NIOSSLContext?
    ) throws -> NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart> {
        guard registry.admit(channel) else {
            channel.close(promise: nil)
            throw ChannelError.ioOnClosedChannel
        }
        channel.closeFuture.whenComplete { _ in registry.remove(channel) }
        let clock = ConnectionClock(limits: limits, registry: registry)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(RequestStartHandler(clock: clock))
        if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
        try pipeline.configureHTTPServerPipeline()
        try pipeline.addHandler(RequestPhaseHandler(clock: clock))
        return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
    }

    static func serve(
        _ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>,
        router: ExporterRouter
    ) async {
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let request): head = request
                case .body: continue
                case .end:
                    guard let request = head else { continue }
                    let response = await router.respond(
                        method: request.method,
                        uri: request.uri,
                        authorization: request.headers.first(name: "Authorization")
                    )
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: response.contentType)
                    headers.add(name: "Content-Length", value: String(response.body.utf8.count))
                    for (name, value) in response.headers { headers.add(name: name, value: value) }
                    if !request.isKeepAlive { headers.add(name: "Connection", value: "close") }
                    let responseHead = HTTPResponseHead(
                        version: request.version,
                        status: response.status,
                        headers: headers
                    )
                    try await outbound.write(.head(responseHead))
                    if request.method != .HEAD {
                        try await outbound.write(.body(.byteBuffer(ByteBuffer(string: response.body))))
                    }
                    try await outbound.write(.end(nil))
                    if !request.isKeepAlive { return }
                    head = nil
                }
            }
        }
    }
}
