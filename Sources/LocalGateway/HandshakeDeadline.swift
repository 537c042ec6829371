import NIOCore
import NIOTLS
import PushTransport

/// Closes a connection whose TLS handshake has not finished within its deadline, so that a
/// client that connects and sends nothing (or stalls mid-handshake) does not hold a connection
/// for ever.
final class HandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let seconds: Double
    private let expired: () -> Void
    private var deadline: Scheduled<Void>?

    init(seconds: Double, expired: @escaping () -> Void) {
        self.seconds = seconds
        self.expired = expired
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard seconds > 0 else { return }
        let channel = context.channel
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
            [expired] in
            expired()
            channel.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Passed on before this handler leaves: a context that has left the pipeline no longer
        // reaches the handlers after it (the HTTP/2 set-up waits for this event).
        context.fireUserInboundEventTriggered(event)
        if let tls = userEvent(event, as: TLSUserEvent.self), case .handshakeCompleted = tls {
            deadline?.cancel()
            deadline = nil
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }
}
