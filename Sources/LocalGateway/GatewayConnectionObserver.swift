import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushCredentials
import X509

/// Notes connection-level errors: a client that broke the stream limit after acknowledging it.
final class GatewayConnectionObserver: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame
    let gateway: LocalGateway
    let connection: GatewayConnectionState

    init(gateway: LocalGateway, connection: GatewayConnectionState) {
        self.gateway = gateway
        self.connection = connection
    }

    /// The client's SETTINGS acknowledgements: the limit they acknowledge is now in force.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .settings(.ack):
            connection.settingsAcknowledged()
        case .settings(.settings), .ping(_, ack: false), .priority:
            if connection.controlFrames.spend(at: context.eventLoop.now) {
                connection.calm()
                return
            }
        default:
            break
        }
        context.fireChannelRead(data)
    }

    /// Nothing read for the idle timeout while nothing is in flight: GOAWAY with APNs' JSON
    /// reason, then close, as APNs does. The gateway stopping: GOAWAY `Shutdown`.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is GatewayShutdownEvent {
            connection.goAway(reason: "Shutdown", gateway: gateway)
            return
        }
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // A connection waiting for answers is not idle (the client has nothing to say).
        guard connection.openStreams == 0, connection.awaitingAnswer == 0, !connection.goingAway else { return }
        gateway.updateStatistics { $0.idleConnectionsClosed += 1 }
        connection.goAway(reason: "IdleTimeout", gateway: gateway)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.MaxStreamsViolation {
            gateway.updateStatistics { $0.streamLimitViolations += 1 }
        }
    }
}
