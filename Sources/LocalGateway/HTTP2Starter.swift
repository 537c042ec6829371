import CredentialFormats
import NIOCore
import NIOSSL
import NIOTLS
import PushTransport

/// Sent through a connection's pipeline when the gateway stops: GOAWAY `Shutdown`.
struct GatewayShutdownEvent {}

/// Sent through a connection's pipeline when a new connection takes its place at the cap:
/// GOAWAY `IdleTimeout` and closed at once (it has nothing in flight).
struct GatewayShedEvent {}

/// Holds HTTP/2 back until the TLS handshake is done, so that the first SETTINGS can depend on
/// how the client authenticated (APNs starts a connection without a client certificate at one
/// stream). Then sets HTTP/2 up behind itself and leaves.
final class HTTP2Starter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let start: (any Channel) throws -> Void

    init(start: @escaping (any Channel) throws -> Void) {
        self.start = start
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = userEvent(event, as: TLSUserEvent.self), case .handshakeCompleted = tls {
            do {
                try start(context.channel)
            } catch {
                context.close(promise: nil)
                return
            }
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        if event is GatewayShutdownEvent || event is GatewayShedEvent {
            // Not speaking HTTP/2 yet: nothing to say goodbye with.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// The client's certificate as verified in the handshake, parsed once for the connection.
    static func peerCertificate(of channel: any Channel) -> PushCertificate? {
        guard let handler = try? channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
            let certificate = handler.peerCertificate,
            let der = try? certificate.toDERBytes()
        else { return nil }
        return try? PushCertificate(der: der)
    }
}
