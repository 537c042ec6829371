import Foundation
import NIOCore
import NIOHTTP2
import PushTransport

/// HTTP/2 PING on a connection the server has gone quiet on, and the verdict when it does not
/// answer: a connection kept open between notifications (a bulk run's, a long-lived sender's)
/// that a NAT, load balancer or firewall dropped without a word is found and closed, so that
/// its owner replaces it before writing a notification into it.
///
/// NIO's `IdleStateHandler`, placed under HTTP/2 where it sees every byte read, says when
/// nothing has been read for ``GatewayConfiguration/KeepAlive/interval``; this handler, above
/// HTTP/2 where the connection's frames arrive, then sends a PING and closes the connection when
/// its ACK has not come within ``GatewayConfiguration/KeepAlive/timeout``.
final class KeepAliveHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let connection: GatewayConnection
    private let timeout: TimeAmount
    private var outstanding: HTTP2PingData?
    private var deadline: Scheduled<Void>?
    private var sent: UInt64 = 0

    init(connection: GatewayConnection, timeout: TimeAmount) {
        self.connection = connection
        self.timeout = timeout
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = userEvent(event, as: IdleStateHandler.IdleStateEvent.self), idle == .read, outstanding == nil {
            sendPing(context: context)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if case .ping(let payload, ack: true) = frame.payload, payload == outstanding {
            outstanding = nil
            deadline?.cancel()
            deadline = nil
            connection.update { $0.pingsAnswered += 1 }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    private func sendPing(context: ChannelHandlerContext) {
        sent += 1
        let payload = HTTP2PingData(withInteger: sent)
        outstanding = payload
        connection.update { $0.pingsSent += 1 }
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .ping(payload, ack: false))),
            promise: nil
        )
        let connection = self.connection
        let seconds = Double(timeout.nanoseconds) / 1e9
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [context] in
            connection.update { state in
                if state.closeDetail == nil {
                    state.closeDetail =
                        "because the server did not answer a PING within \(GatewayError.format(seconds)) s"
                }
            }
            context.close(promise: nil)
        }
    }
}
