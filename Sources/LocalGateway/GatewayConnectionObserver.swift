import CredentialFormats
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushTransport
import X509

/// Notes connection-level errors: a client that broke the stream limit after acknowledging it.
final class GatewayConnectionObserver: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame
    let gateway: LocalGateway
    /// The connection's streams, whose handler owns the connection's state.
    let streams: GatewayStreams

    init(gateway: LocalGateway, streams: GatewayStreams) {
        self.gateway = gateway
        self.streams = streams
    }

    /// The client's SETTINGS acknowledgements: the limit they acknowledge is now in force.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .settings(.ack):
            streams.settingsAcknowledged()
        case .settings(.settings), .ping(_, ack: false), .priority:
            guard streams.controlFrameReceived(at: context.eventLoop.now) else { return }
        default:
            break
        }
        context.fireChannelRead(data)
    }

    /// Nothing read for the idle timeout while nothing is in flight: GOAWAY with APNs' JSON
    /// reason, then close, as APNs does. The gateway stopping: GOAWAY `Shutdown`.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is GatewayShutdownEvent {
            streams.shutdown()
            return
        }
        if event is GatewayShedEvent {
            streams.shed()
            return
        }
        guard let idle = userEvent(event, as: IdleStateHandler.IdleStateEvent.self), idle == .read else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        streams.idleTimedOut()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTP2Errors.MaxStreamsViolation {
            gateway.updateStatistics { $0.streamLimitViolations += 1 }
        }
    }
}
