import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PushStore
import TestSupport
import Testing

@testable import PushGateway

/// PING on a quiet connection: answered while the server is there, and the connection closed
/// with its reason when the path to the server goes silent (a TCP relay that stops forwarding,
/// as a NAT that forgot the connection does).
@Suite(.timeLimit(.minutes(2))) struct KeepAliveTests {
    @Test func quietConnectionIsPingedAndStaysOpen() async throws {
        try await RunningGateway.with { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal())) {
                $0.keepAlive = .init(interval: 0.2, timeout: 30)
            }
            defer { Task { await connection.close() } }
            #expect(try await eventually { connection.pings.answered >= 2 })
            #expect(connection.isUsable)
            #expect(try await connection.send(try .alert()).status == 200)
        }
    }

    @Test func silentPathClosesTheConnectionWithItsReason() async throws {
        try await RunningGateway.with { running in
            let relay = try await Relay.start(to: running.port)
            defer { Task { await relay.stop() } }
            var configuration = try running.configuration(.certificate(Fixtures.universal()))
            configuration.endpoint = .custom(host: "127.0.0.1", port: relay.port)
            // A PING's answer may wait on a loaded machine: the timeout is what a silent path
            // exceeds however long it is, not a time the answer must beat.
            configuration.keepAlive = .init(interval: 0.2, timeout: 10)
            let connection = try await GatewayConnection.connect(configuration)
            defer { Task { await connection.close() } }
            #expect(try await eventually { connection.pings.answered >= 1 })
            relay.freeze()
            #expect(try await eventually(timeout: 90) { !connection.isUsable })
            #expect(
                connection.closedBecause?.contains("did not answer a PING") == true,
                "\(connection.closedBecause ?? "")"
            )
        }
    }
}

/// A TCP relay on 127.0.0.1 to a local port, which can be told to stop forwarding anything
/// while keeping both connections open.
final class Relay: Sendable {
    let port: Int
    private let server: any Channel
    private let frozen: NIOLockedValueBox<Bool>

    private init(port: Int, server: any Channel, frozen: NIOLockedValueBox<Bool>) {
        self.port = port
        self.server = server
        self.frozen = frozen
    }

    func freeze() { frozen.withLockedValue { $0 = true } }

    func stop() async { try? await server.close() }

    static func start(to target: Int) async throws -> Relay {
        let frozen = NIOLockedValueBox(false)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { inbound in
                ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: "127.0.0.1", port: target)
                    .flatMap { outbound in
                        inbound.eventLoop.makeCompletedFuture {
                            try inbound.pipeline.syncOperations.addHandler(Forward(to: outbound, frozen: frozen))
                            try outbound.pipeline.syncOperations.addHandler(Forward(to: inbound, frozen: frozen))
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return Relay(port: server.localAddress?.port ?? 0, server: server, frozen: frozen)
    }

    /// Writes what one side reads to the other, unless frozen; closes the other when one closes.
    final class Forward: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let other: any Channel
        let frozen: NIOLockedValueBox<Bool>
        init(to other: any Channel, frozen: NIOLockedValueBox<Bool>) {
            self.other = other
            self.frozen = frozen
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !frozen.withLockedValue({ $0 }) else { return }
            other.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }
        func channelInactive(context: ChannelHandlerContext) {
            other.close(promise: nil)
            context.fireChannelInactive()
        }
    }
}
