import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import PushCredentials

/// A long-running HTTP/1.1 endpoint for Prometheus: `/metrics` (the check series, recomputed at
/// most once per interval) and `/probe` (a handshake and auth check, in blackbox_exporter's names).
/// A library type, so that a Swift server can embed it.
public final class MetricsExporter: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var check: StoreCheck
        /// The least time between two checks of the store.
        public var checkInterval: Double
        public var probe: ProbeSettings

        public init(
            host: String = "127.0.0.1",
            port: Int,
            check: StoreCheck,
            checkInterval: Double = 300,
            probe: ProbeSettings
        ) {
            self.host = host
            self.port = port
            self.check = check
            self.checkInterval = checkInterval
            self.probe = probe
        }
    }

    public let configuration: Configuration
    let router: ExporterRouter
    private let group: MultiThreadedEventLoopGroup
    private let serverChannel = NIOLockedValueBox<(any Channel)?>(nil)

    public init(configuration: Configuration, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.configuration = configuration
        router = ExporterRouter(
            checks: CheckCache(check: configuration.check, interval: configuration.checkInterval),
            probes: ProbeService(store: configuration.check.store, settings: configuration.probe, log: log)
        )
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// Listens, calls `onStart` with the bound port, and serves until ``stop()``.
    public func run(onStart: @Sendable (Int) -> Void = { _ in }) async throws {
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: channel
                    )
                }
            }
        serverChannel.withLockedValue { $0 = server.channel }
        onStart(server.channel.localAddress?.port ?? configuration.port)
        let router = self.router
        try await withThrowingDiscardingTaskGroup { connections in
            try await server.executeThenClose { inbound in
                for try await connection in inbound {
                    connections.addTask { await Self.serve(connection, router: router) }
                }
            }
            // Prometheus keeps its connections open: a stop closes them.
            connections.cancelAll()
        }
        try? await group.shutdownGracefully()
    }

    /// Stops listening; ``run(onStart:)`` then returns.
    public func stop() {
        let channel = serverChannel.withLockedValue { $0 }
        channel?.close(promise: nil)
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
                    let response = await router.respond(method: request.method, uri: request.uri)
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: response.contentType)
                    headers.add(name: "Content-Length", value: String(response.body.utf8.count))
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

/// The check, run again only when the last one is older than the interval.
actor CheckCache {
    let check: StoreCheck
    let interval: Double
    private var last: CheckRun?

    init(check: StoreCheck, interval: Double) {
        self.check = check
        self.interval = interval
    }

    func current(now: Date = Date()) -> CheckRun {
        if let last, now.timeIntervalSince(last.date) < interval { return last }
        let run = check.run(at: now)
        last = run
        return run
    }
}

struct ExporterResponse: Sendable {
    var status: HTTPResponseStatus
    var contentType: String
    var body: String

    static let metricsType = "text/plain; version=0.0.4; charset=utf-8"

    static func text(_ status: HTTPResponseStatus, _ message: String) -> ExporterResponse {
        ExporterResponse(status: status, contentType: "text/plain; charset=utf-8", body: message + "\n")
    }
}

/// Which answer a request gets.
struct ExporterRouter: Sendable {
    let checks: CheckCache
    let probes: ProbeService

    func respond(method: HTTPMethod, uri: String) async -> ExporterResponse {
        guard method == .GET || method == .HEAD else {
            return .text(.methodNotAllowed, "Only GET is served.")
        }
        guard let components = URLComponents(string: uri) else {
            return .text(.badRequest, "The request's URL cannot be read.")
        }
        switch components.path {
        case "/metrics":
            let run = await checks.current()
            return ExporterResponse(
                status: .ok,
                contentType: ExporterResponse.metricsType,
                body: CheckMetrics.render(run)
            )
        case "/probe":
            let query = (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }
            do {
                let target = try probes.target(from: query)
                let (result, cached) = await probes.probe(target)
                return ExporterResponse(
                    status: .ok,
                    contentType: ExporterResponse.metricsType,
                    body: ProbeMetrics.render(result, cached: cached)
                )
            } catch let error as ProbeRequestError {
                return .text(.badRequest, error.message)
            } catch {
                return .text(.badRequest, "\(error)")
            }
        case "/", "":
            return .text(
                .ok,
                "apnsctl exporter: /metrics for the store's check, /probe?credential=ALIAS&environment=sandbox|production[&topic=BUNDLE] for a probe."
            )
        default:
            return .text(.notFound, "Not found: the exporter serves /metrics and /probe.")
        }
    }
}
