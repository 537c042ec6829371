import NIOCore
import NIOHTTP2

extension GatewayStreams {
    /// The receive windows, as swift-nio-http2 reports them after each DATA frame: topped up to
    /// the target once they fall to half of it. The connection's always (request bodies of
    /// streams already answered or reset count against it too); a stream's only while its
    /// request body is still wanted.
    func giveBackWindow(_ streamID: HTTP2StreamID, size: Int, context: ChannelHandlerContext) {
        guard !isClosed else { return }
        if let before = creditPending[streamID] {
            guard size > before else { return }  // queued before the credit went out
            creditPending[streamID] = nil
        }
        guard size < Self.targetWindowSize else { return }
        if streamID != .rootStream {
            guard let stream = streams[streamID], stream.reading else { return }
        }
        let increment = Self.targetWindowSize - size
        guard size < 0 || increment >= size else { return }
        creditPending[streamID] = size
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .windowUpdate(windowSizeIncrement: increment))),
            promise: nil
        )
        flush(context: context)
    }
}
