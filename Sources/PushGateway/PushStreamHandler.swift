import Dispatch
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOTLS

/// One request on its own stream.
struct StreamRequest: Sendable {
    var headers: HPACKHeaders
    var body: ByteBuffer?
    /// Nil: no timer per stream (the bulk sender watches whole connections instead, which
    /// costs nothing per notification).
    var timeout: TimeAmount?
    var timeoutSeconds: Double
}

/// A server's answer as it came off the wire, for the caller to decode: a notification's as a
/// ``PushResponse``, the channel service's as a ``ChannelResponse``.
struct WireAnswer: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    var latency: Double
}

/// How a stream ended: the server's answer, or an error and whether the request was written.
typealias StreamCompletion = @Sendable (Result<WireAnswer, GatewayError>, _ written: Bool) -> Void

/// How a stream ended, settled once whichever of the stream and its opening fails first.
struct StreamOutcome: Sendable {
    var result: Result<WireAnswer, GatewayError>
    var written: Bool
}

/// Writes one notification on its stream and collects the answer.
///
/// The answer is complete at END_STREAM. A server may answer before reading the request body
/// and then reset the stream with NO_ERROR (RFC 9113 section 8.1; nginx does this): that
/// reset, and the failed write of a body the server no longer wants, are not errors.
final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let request: StreamRequest
    private let completion: StreamCompletion
    private let connection: GatewayConnection
    private var started = false
    private var finished = false
    private var startedAt = DispatchTime.now()
    private var status: Int?
    private var responseHeaders: [(String, String)] = []
    private var body: [UInt8] = []
    private var streamID: HTTP2StreamID?
    private var timeout: Scheduled<Void>?

    init(request: StreamRequest, connection: GatewayConnection, completion: @escaping StreamCompletion) {
        self.request = request
        self.completion = completion
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        connection.streamOpened()
        startedAt = DispatchTime.now()
        streamID = RequestWriter.write(request.headers, body: request.body, on: context)
        let seconds = request.timeoutSeconds
        guard let limit = request.timeout else { return }
        timeout = context.eventLoop.assumeIsolated().scheduleTask(in: limit) { [self] in
            fail(GatewayError.requestTimeout(seconds: seconds))
            context.close(promise: nil)  // sends RST_STREAM CANCEL
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if status == nil, let text = headers.headers.first(name: ":status"), let code = Int(text) {
                if code >= 200 {
                    status = code
                    responseHeaders = headers.headers.map { ($0.name, $0.value) }
                }
            }
            if headers.endStream { finish() }
        case .data(let data):
            if case .byteBuffer(var buffer) = data.data, let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body += bytes
            }
            if data.endStream { finish() }
        case .rstStream(let code):
            reset(code, context: context)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            reset(closed.errorCode, context: context)
        }
        // Other errors (a write refused after the server reset the stream) end in
        // channelInactive, which decides.
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !finished {
            // Decide on the next tick: a GOAWAY read in the same batch reaches the connection
            // observer after the streams it closes.
            context.eventLoop.assumeIsolated().execute { [self] in
                fail(unansweredError(closing: true))
            }
        }
        context.fireChannelInactive()
    }

    private func reset(_ code: HTTP2ErrorCode, context: ChannelHandlerContext) {
        guard !finished else { return }  // NO_ERROR after a complete answer: normal
        if code == .noError, status != nil {
            finish()  // answer without END_STREAM, then NO_ERROR: take what came
            return
        }
        if code == .refusedStream || connection.goAway != nil {
            // REFUSED_STREAM: not processed. After GOAWAY, a server resets the streams it will
            // not answer (nginx and swift-nio-http2 send CANCEL); the last-stream-id decides.
            context.eventLoop.assumeIsolated().execute { [self] in fail(unansweredError(closing: false)) }
            return
        }
        fail(
            GatewayError(
                .streamReset,
                "The server reset the stream (\(ConnectionObserver.name(code))) without answering.",
                hint: "This is not what APNs does; check what listens at the gateway address."
            )
        )
    }

    /// The error for a stream that got no answer: GOAWAY says whether it was processed.
    private func unansweredError(closing: Bool) -> GatewayError {
        if let goAway = connection.goAway {
            let processed = streamID.map { Int($0) <= goAway.lastStreamID } ?? false
            return .goAway(goAway, processed: processed)
        }
        if !closing {
            return GatewayError(
                .streamReset,
                "The server refused the stream (REFUSED_STREAM) without processing it.",
                hint: "It was not processed; send it again.",
                isRetryable: true
            )
        }
        // The request was written: the server may have delivered it.
        return started ? .answerLost(connection.closeReason) : .connectionClosed("before the request was sent")
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        timeout?.cancel()
        connection.streamFinished()
        let latency = GatewayConnection.seconds(since: startedAt)
        guard let status else {
            completion(
                .failure(
                    GatewayError(
                        .http2Failed,
                        "The server ended the stream without a :status.",
                        hint: "This is not an APNs-compatible server."
                    )
                ),
                true
            )
            return
        }
        completion(.success(WireAnswer(status: status, headers: responseHeaders, body: body, latency: latency)), true)
    }

    private func fail(_ error: GatewayError) {
        guard !finished else { return }
        finished = true
        timeout?.cancel()
        if started { connection.streamFinished() }
        completion(.failure(error), started)
    }
}

/// Writes a request on its stream: HEADERS, then DATA with the body when there is one, one flush.
/// Returns the stream's ID, which swift-nio-http2 assigns at the first write.
enum RequestWriter {
    @discardableResult
    static func write(_ headers: HPACKHeaders, body: ByteBuffer?, on context: ChannelHandlerContext) -> HTTP2StreamID? {
        let body = body.flatMap { $0.readableBytes > 0 ? $0 : nil }
        let head = HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: body == nil))
        context.write(NIOAny(head), promise: nil)
        if let body {
            context.write(
                NIOAny(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: true))),
                promise: nil
            )
        }
        context.flush()
        return try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
    }
}
