import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushCredentials
import PushGateway
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

    /// Nothing read for the idle timeout: GOAWAY with APNs' JSON reason, then close, as APNs does.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read, !connection.closing else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        connection.closing = true
        gateway.updateStatistics { $0.idleConnectionsClosed += 1 }
        let reason = context.channel.allocator.buffer(string: #"{"reason":"IdleTimeout"}"#)
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: connection.highestProcessed, errorCode: .noError, opaqueData: reason)
        )
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in context.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.MaxStreamsViolation {
            gateway.updateStatistics { $0.streamLimitViolations += 1 }
        }
    }
}
