import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP request to the server, below the address's path prefix.
struct VaultHTTPRequest: Sendable {
    var method: HTTPMethod
    /// The path with its query, from `/v1/` on.
    var target: String
    var headers: [(String, String)]
    var body: [UInt8]?
    /// A longer limit than the configuration's for a request the server is known to be slow to
    /// answer the first time.
    var timeout: Duration?
}

/// What came back.
struct VaultHTTPResponse: Sendable {
    var status: Int
    var body: [UInt8]
}

/// Why a request got no answer: the caller words it as ``VaultError/Code/unreachable``.
enum VaultTransportFailure: Error {
    case connect(String)
    case timedOut(seconds: Double)
    case closedEarly
    case tooLarge
    case tls(String)
}

/// A small HTTP/1.1 client on NIO: one connection per request (`Connection: close`), TLS by
/// swift-nio-ssl for `https` (with the configuration's CA file when there is one), plain TCP for
/// `http` to a loopback address; a connect timeout and a timeout for the whole request.
final class VaultHTTPTransport: Sendable {
    /// Answers larger than this are refused: Vault's are a few kilobytes.
    static let maximumBody = 4 * 1024 * 1024

    let host: String
    let port: Int
    let pathPrefix: String
    let connectTimeout: TimeAmount
    let requestTimeout: TimeAmount
    let sslContext: NIOSSLContext?
    let group: any EventLoopGroup

    init(configuration: VaultConfiguration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        host = configuration.host
        port = configuration.port
        pathPrefix = configuration.pathPrefix
        connectTimeout = Self.amount(configuration.connectTimeout)
        requestTimeout = Self.amount(configuration.requestTimeout)
        self.group = group
        if configuration.scheme == "https" {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let caFile = configuration.caFile {
                guard FileManager.default.isReadableFile(atPath: caFile) else {
                    throw VaultError.invalidConfiguration(
                        address: configuration.address,
                        "The CA file \(caFile) cannot be read.",
                        hint: "Set VAULT_CACERT to a readable PEM file of the server's CA certificates."
                    )
                }
                tls.trustRoots = .file(caFile)
            }
            do {
                sslContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw VaultError.invalidConfiguration(
                    address: configuration.address,
                    "The TLS settings cannot be used: \(error).",
                    hint: "Check that VAULT_CACERT is a PEM file of CA certificates."
                )
            }
        } else {
            sslContext = nil
        }
    }

    static func amount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Sends `request` and waits for the whole answer.
    func send(_ request: VaultHTTPRequest) async throws -> VaultHTTPResponse {
        let loop = group.next()
        let promise = loop.makePromise(of: VaultHTTPResponse.self)
        let sslContext = self.sslContext
        let serverName = Self.isIPAddress(host) ? nil : host
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if let sslContext {
                        let handler = try NIOSSLClientHandler(context: sslContext, serverHostname: serverName)
                        try sync.addHandler(handler)
                    }
                    try sync.addHTTPClientHandlers()
                    try sync.addHandler(ResponseCollector(promise: promise, limit: Self.maximumBody))
                }
            }
        let timeout = request.timeout.map(Self.amount) ?? requestTimeout
        let timer = loop.scheduleTask(in: timeout) {
            promise.fail(VaultTransportFailure.timedOut(seconds: Double(timeout.nanoseconds) / 1e9))
        }
        defer { timer.cancel() }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            promise.fail(VaultTransportFailure.connect(Self.describe(error)))
            throw VaultTransportFailure.connect(Self.describe(error))
        }
        defer { channel.close(promise: nil) }
        var head = HTTPRequestHead(version: .http1_1, method: request.method, uri: pathPrefix + request.target)
        head.headers.add(name: "Host", value: hostHeader)
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "Accept", value: "application/json")
        for (name, value) in request.headers { head.headers.add(name: name, value: value) }
        if let body = request.body {
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Content-Length", value: String(body.count))
        }
        let bodyBuffer = request.body.map { channel.allocator.buffer(bytes: $0) }
        let finalHead = head
        channel.eventLoop.execute {
            channel.write(HTTPClientRequestPart.head(finalHead), promise: nil)
            if let bodyBuffer { channel.write(HTTPClientRequestPart.body(.byteBuffer(bodyBuffer)), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenFailure { error in
                promise.fail(VaultTransportFailure.connect(Self.describe(error)))
            }
        }
        return try await promise.futureResult.get()
    }

    var hostHeader: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(shownHost):\(port)"
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    /// A connection failure in a few words (`connection refused`), never with request data.
    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return describe(first.error) }
            if error.dnsAAAAError != nil || error.dnsAError != nil { return "the host name cannot be resolved" }
            return "no address to connect to"
        }
        if case ChannelError.connectTimeout = error { return "the connection timed out" }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED: return "connection refused"
            case ENETUNREACH, EHOSTUNREACH: return "no route to the host"
            default: return "connection failed (errno \(error.errnoCode))"
            }
        }
        if error is NIOSSLError || error is BoringSSLError { return "TLS handshake failed (\(error))" }
        return "connection failed"
    }
}

/// Collects one response (head, body, end) and completes the promise; fails it when the
/// connection ends early or the body is too large.
private final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<VaultHTTPResponse>
    private let limit: Int
    private var status: Int?
    private var body: [UInt8] = []
    private var done = false

    init(promise: EventLoopPromise<VaultHTTPResponse>, limit: Int) {
        self.promise = promise
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(var buffer):
            guard body.count + buffer.readableBytes <= limit else {
                finish(.failure(VaultTransportFailure.tooLarge))
                context.close(promise: nil)
                return
            }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            if let status {
                finish(.success(VaultHTTPResponse(status: status, body: body)))
            } else {
                finish(.failure(VaultTransportFailure.closedEarly))
            }
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(VaultTransportFailure.closedEarly))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOSSLError || error is BoringSSLError {
            finish(.failure(VaultTransportFailure.tls(VaultHTTPTransport.describe(error))))
        } else {
            finish(.failure(VaultTransportFailure.closedEarly))
        }
        context.close(promise: nil)
    }

    private func finish(_ result: Result<VaultHTTPResponse, any Error>) {
        guard !done else { return }
        done = true
        promise.completeWith(result)
    }
}
