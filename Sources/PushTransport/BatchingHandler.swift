import NIOCore

/// Sits between TLS and HTTP/2 for the bulk sender. It calls back at the end of each batch of
/// reads; it gathers the HTTP/2 frames written before a flush into one buffer, because
/// swift-nio-ssl seals and sends each write as a TLS record and system call of its own; and
/// while the sender opens a batch of streams it holds their flushes back, so the whole batch
/// leaves in one record instead of one per notification.
///
/// The local gateway puts one in front of its HTTP/2 handler too, for its answers.
package final class BatchingHandler: ChannelDuplexHandler, @unchecked Sendable {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ByteBuffer
    package typealias OutboundIn = IOData
    package typealias OutboundOut = IOData

    private let readComplete: (@Sendable () -> Void)?
    private var context: ChannelHandlerContext?
    private var holding = false
    private var flushHeld = false
    private var gathered: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []

    package init(readComplete: (@Sendable () -> Void)? = nil) { self.readComplete = readComplete }

    package func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    package func handlerRemoved(context: ChannelHandlerContext) {
        release(context: context)
        self.context = nil
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        readComplete?()
        context.fireChannelReadComplete()
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
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

    package func flush(context: ChannelHandlerContext) {
        if holding {
            flushHeld = true
            return
        }
        release(context: context)
        context.flush()
    }

    package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
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
    package func beginBatch() { holding = true }

    /// Sends everything written since ``beginBatch()`` with one flush.
    package func endBatch() {
        holding = false
        if flushHeld, let context {
            flushHeld = false
            release(context: context)
            context.flush()
        }
    }
}
