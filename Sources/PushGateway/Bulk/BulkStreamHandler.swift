import Dispatch
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One notification of a bulk run on its own stream: writes the request, collects the answer,
/// and tells the sender how the stream ended, once. It judges nothing: what an ending means is
/// the engine's decision.
///
/// The answer is complete at END_STREAM. A server may answer before reading the request body
/// and then reset the stream with NO_ERROR (RFC 9113 section 8.1; nginx does this): once the
/// answer is in, that reset is not even reported.
final class BulkStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    enum Outcome {
        case answered(PushResponse)
        case reset(BulkEngine.ResetCode)
        /// Ended with neither: the connection closed or went away.
        case closed
    }

    private let sendID: BulkEngine.SendID
    private let connectionID: BulkEngine.ConnectionID
    private let headers: HPACKHeaders
    private let body: ByteBuffer
    private unowned let sender: BulkSender
    private var started = false
    private var ended = false
    private var loop: (any EventLoop)?
    private var startedAt = DispatchTime.now()
    private var status: Int?
    private var responseHeaders: [(String, String)] = []
    private var responseBody: [UInt8] = []

    init(
        sendID: BulkEngine.SendID,
        connectionID: BulkEngine.ConnectionID,
        headers: HPACKHeaders,
        body: ByteBuffer,
        sender: BulkSender
    ) {
        self.sendID = sendID
        self.connectionID = connectionID
        self.headers = headers
        self.body = body
        self.sender = sender
    }

    func handlerAdded(context: ChannelHandlerContext) {
        loop = context.eventLoop
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        startedAt = DispatchTime.now()
        let streamID = RequestWriter.write(headers, body: body, on: context)
        sender.streamStarted(sendID, on: connectionID, streamID: streamID.map { Int($0) }, channel: context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if status == nil, let text = frame.headers.first(name: ":status"), let code = Int(text), code >= 200 {
                status = code
                responseHeaders = frame.headers.map { ($0.name, $0.value) }
            }
            if frame.endStream { answer() }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data, let bytes = buffer.readBytes(length: buffer.readableBytes) {
                responseBody += bytes
            }
            if frame.endStream { answer() }
        case .rstStream(let code):
            reset(code)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let closed = error as? NIOHTTP2Errors.StreamClosed { reset(closed.errorCode) }
        // Other errors (a write refused after the server reset the stream) end in
        // channelInactive.
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(.closed)
        context.fireChannelInactive()
    }

    private func reset(_ code: HTTP2ErrorCode) {
        if code == .noError, status != nil {
            answer()  // an answer without END_STREAM, then NO_ERROR: take what came
            return
        }
        switch code {
        case .noError: end(.reset(.noError))
        case .refusedStream: end(.reset(.refusedStream))
        default: end(.reset(.other(ConnectionObserver.name(code))))
        }
    }

    private func answer() {
        guard let status else {
            end(.reset(.other("an answer without :status")))
            return
        }
        let latency = GatewayConnection.seconds(since: startedAt)
        end(.answered(PushResponse(status: status, headers: responseHeaders, body: responseBody, latency: latency)))
    }

    private func end(_ outcome: Outcome) {
        guard !ended else { return }
        ended = true
        let outcome = started ? outcome : .closed
        switch outcome {
        case .answered, .reset(.refusedStream), .reset(.noError):
            sender.streamEnded(sendID, on: connectionID, outcome)
        case .reset, .closed:
            // What a stream cut off without an answer means depends on a GOAWAY, and swift-nio-http2
            // closes the streams a GOAWAY drops (with CANCEL) before the GOAWAY itself reaches the
            // connection's handlers: report on the next tick, when the GOAWAY is known.
            let (sender, sendID, connectionID) = (self.sender, self.sendID, self.connectionID)
            loop?.execute { sender.streamEnded(sendID, on: connectionID, outcome) }
        }
    }
}
