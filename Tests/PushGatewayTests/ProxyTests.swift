import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import PushStore
import TestSupport
import Testing

@testable import PushGateway

/// Connecting through an HTTP CONNECT proxy (HTTPS_PROXY), with a small real proxy on loopback.
@Suite(.timeLimit(.minutes(2))) struct ProxyTests {
    @Test func notificationsGoThroughTheTunnel() async throws {
        try await RunningGateway.with { running in
            let proxy = try await ConnectProxy.start()
            defer { proxy.channel.close(promise: nil) }
            let connection = try await running.connect(.certificate(try Fixtures.universal())) {
                $0.proxy = URL(string: "http://user:s%40cret@127.0.0.1:\(proxy.port)")
            }
            defer { Task { await connection.close() } }
            #expect(try await connection.send(try .alert()).status == 200)
            let seen = proxy.seen.withLockedValue { $0 }
            #expect(seen.targets == ["127.0.0.1:\(running.port)"])
            #expect(seen.authorization == "Basic " + Data("user:s@cret".utf8).base64EncodedString())
            let report = connection.handshakeReport
            #expect(report.proxy == "127.0.0.1:\(proxy.port)")
            #expect(report.resolvedAddress == "127.0.0.1:\(proxy.port)")
            #expect(report.proxyConnectDuration != nil)
            // The password never reaches the report.
            #expect(!String(decoding: try JSONEncoder().encode(report), as: UTF8.self).contains("cret"))
        }
    }

    @Test func refusedTunnelIsProxyFailed() async throws {
        try await RunningGateway.with { running in
            let proxy = try await ConnectProxy.start(refuse: true)
            defer { proxy.channel.close(promise: nil) }
            let error = await gatewayError {
                _ = try await running.connect(.none) { $0.proxy = URL(string: "http://127.0.0.1:\(proxy.port)") }
            }
            #expect(error?.code == .proxyFailed)
            #expect(error?.message.contains("403") == true)
        }
    }
}

/// A minimal CONNECT proxy that only tunnels to loopback.
struct ConnectProxy {
    struct Seen {
        var targets: [String] = []
        var authorization: String?
    }

    let channel: any Channel
    let port: Int
    let seen: NIOLockedValueBox<Seen>

    static func start(refuse: Bool = false) async throws -> ConnectProxy {
        let seen = NIOLockedValueBox(Seen())
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
                    let encoder = HTTPResponseEncoder()
                    try channel.pipeline.syncOperations.addHandlers([
                        decoder, encoder,
                        ConnectHandler(seen: seen, refuse: refuse, encoder: encoder, decoder: decoder),
                    ])
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return ConnectProxy(channel: channel, port: channel.localAddress!.port!, seen: seen)
    }
}

final class ConnectHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let seen: NIOLockedValueBox<ConnectProxy.Seen>
    let refuse: Bool
    let encoder: HTTPResponseEncoder
    let decoder: ByteToMessageHandler<HTTPRequestDecoder>
    var target: String?

    init(
        seen: NIOLockedValueBox<ConnectProxy.Seen>,
        refuse: Bool,
        encoder: HTTPResponseEncoder,
        decoder: ByteToMessageHandler<HTTPRequestDecoder>
    ) {
        self.seen = seen
        self.refuse = refuse
        self.encoder = encoder
        self.decoder = decoder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            target = head.method == .CONNECT ? head.uri : nil
            let authorization = head.headers.first(name: "Proxy-Authorization")
            seen.withLockedValue { $0.authorization = authorization }
        case .body:
            break
        case .end:
            guard !refuse, let target, let colon = target.lastIndex(of: ":"),
                let port = Int(target[target.index(after: colon)...]),
                ["127.0.0.1", "localhost"].contains(String(target[..<colon]))
            else {
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .forbidden))),
                    promise: nil
                )
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
                return
            }
            seen.withLockedValue { $0.targets.append(target) }
            let client = context.channel
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelInitializer { upstream in upstream.pipeline.addHandler(Forward(to: client)) }
                .connect(host: "127.0.0.1", port: port)
                .hop(to: context.eventLoop)
                .whenComplete { result in
                    let (handler, context) = loopBound.value
                    switch result {
                    case .success(let upstream):
                        var head = HTTPResponseHead(version: .http1_1, status: .ok)
                        head.headers.add(name: "Content-Length", value: "0")
                        context.write(handler.wrapOutboundOut(.head(head)), promise: nil)
                        context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                        let pipeline = context.pipeline.syncOperations
                        pipeline.removeHandler(handler.encoder, promise: nil)
                        pipeline.removeHandler(handler.decoder, promise: nil)
                        try? pipeline.addHandler(Forward(to: upstream))
                        pipeline.removeHandler(context: context, promise: nil)
                    case .failure:
                        context.write(
                            handler.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badGateway))),
                            promise: nil
                        )
                        context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                    }
                }
        }
    }
}

/// Copies bytes to another channel and closes it when this one closes.
final class Forward: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let target: any Channel
    init(to target: any Channel) { self.target = target }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        target.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }
    func channelInactive(context: ChannelHandlerContext) {
        target.close(promise: nil)
        context.fireChannelInactive()
    }
}
