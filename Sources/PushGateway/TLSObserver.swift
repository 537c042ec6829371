import Dispatch
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOTLS
import PushTransport

/// Waits for the TLS handshake, then (synchronously, from inside the event) lets the
/// connection put HTTP/2 on the pipeline.
final class TLSObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The peer closed before the handshake finished.
    struct ClosedDuringHandshake: Error {
        var detail: String?
    }

    private let result: OncePromise<String?>
    private let onHandshake: (ChannelHandlerContext, String?) throws -> Void
    private var firstError: (any Error)?

    init(result: OncePromise<String?>, onHandshake: @escaping (ChannelHandlerContext, String?) throws -> Void) {
        self.result = result
        self.onHandshake = onHandshake
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = userEvent(event, as: TLSUserEvent.self), case .handshakeCompleted(let negotiated) = tls,
            !result.isCompleted
        {
            do {
                try onHandshake(context, negotiated)
                result.complete(.success(negotiated))
            } catch {
                result.complete(.failure(error))
                context.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !result.isCompleted, firstError == nil { firstError = error }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !result.isCompleted {
            result.complete(.failure(firstError ?? ClosedDuringHandshake(detail: nil)))
        }
        context.fireChannelInactive()
    }
}
