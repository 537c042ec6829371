import Dispatch
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOTLS

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
        if let tls = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = tls, !result.isCompleted {
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

/// Sits between TLS and HTTP/2 for the bulk sender. It calls back at the end of each batch of
/// reads; it gathers the HTTP/2 frames written before a flush into one buffer, because
/// swift-nio-ssl seals and sends each write as a TLS record and system call of its own; and
/// while the sender opens a batch of streams it holds their flushes back, so the whole batch
/// leaves in one record instead of one per notification.
///
/// The local gateway puts one in front of its HTTP/2 handler too, for its answers.
public final class BatchingHandler: ChannelDuplexHandler, @unchecked Sendable {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = ByteBuffer
    public typealias OutboundIn = IOData
    public typealias OutboundOut = IOData

    private let readComplete: (@Sendable () -> Void)?
    private var context: ChannelHandlerContext?
    private var holding = false
    private var flushHeld = false
    private var gathered: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []

    public init(readComplete: (@Sendable () -> Void)? = nil) { self.readComplete = readComplete }

    public func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    public func handlerRemoved(context: ChannelHandlerContext) {
        release(context: context)
        self.context = nil
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        readComplete?()
        context.fireChannelReadComplete()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(let buffer) = unwrapOutboundIn(data) else {
            release(context: context)
            context.write(data, promise: promise)
            return
        }
        if gathered == nil {
            var fresh = context.channel.allocator.buffer(capacity: max(buffer.readableBytes, 16_384))
            fresh.writeImmutableBuffer(buffer)
            gathered = fresh
        } else {
            gathered!.writeImmutableBuffer(buffer)
        }
        if let promise { promises.append(promise) }
    }

    public func flush(context: ChannelHandlerContext) {
        if holding {
            flushHeld = true
            return
        }
        release(context: context)
        context.flush()
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        release(context: context)
        context.flush()
        context.close(mode: mode, promise: promise)
    }

    /// Passes what was gathered on as one write.
    private func release(context: ChannelHandlerContext) {
        guard let buffer = gathered else { return }
        gathered = nil
        let waiting = promises
        promises = []
        if waiting.isEmpty {
            context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
        } else {
            let promise = context.eventLoop.makePromise(of: Void.self)
            for other in waiting { promise.futureResult.cascade(to: other) }
            context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
        }
    }

    /// From here until ``endBatch()``, flushes wait.
    func beginBatch() { holding = true }

    /// Sends everything written since ``beginBatch()`` with one flush.
    func endBatch() {
        holding = false
        if flushHeld, let context {
            flushHeld = false
            release(context: context)
            context.flush()
        }
    }
}
