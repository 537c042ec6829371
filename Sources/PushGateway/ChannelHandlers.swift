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

/// Sees the connection-level frames (stream 0: SETTINGS, GOAWAY, PING) that swift-nio-http2
/// passes up the parent pipeline, and the connection's end.
final class ConnectionObserver: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let connection: GatewayConnection
    private let settings: OncePromise<Void>

    init(connection: GatewayConnection, settings: OncePromise<Void>) {
        self.connection = connection
        self.settings = settings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let list)):
            connection.update { state in
                for setting in list {
                    state.report.serverSettings[Self.name(setting.parameter)] = UInt32(setting.value)
                    if setting.parameter == .maxConcurrentStreams {
                        state.maxConcurrentStreams = UInt32(setting.value)
                    }
                }
                if !settings.isCompleted {
                    state.report.maxConcurrentStreams = state.maxConcurrentStreams
                }
            }
            if list.contains(where: { $0.parameter == .maxConcurrentStreams }) {
                connection.events?(.settings(maxConcurrentStreams: connection.maxConcurrentStreams))
            }
            settings.complete(.success(()))
        case .goAway(let lastStreamID, let errorCode, let opaqueData):
            let info = GatewayError.GoAwayInfo(lastStreamID: Int(lastStreamID), errorCode: Self.name(errorCode),
                                               reason: Self.reason(opaqueData))
            connection.update { $0.goAway = info }
            connection.events?(.goAway(lastStreamID: Int(lastStreamID)))
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Stream-level errors also pass here; the streams handle those themselves.
        guard Self.isConnectionFatal(error) else { return }
        connection.update { state in
            if state.connectionError == nil { state.connectionError = String(describing: error) }
            state.closeDetail = state.closeDetail ?? "after swift-nio-http2 judged the server abusive (\(type(of: error)))"
        }
        // swift-nio-http2 has already sent GOAWAY for these but leaves closing to us; a
        // connection we have told to go away must not carry more notifications.
        context.close(promise: nil)
    }

    /// swift-nio-http2's denial-of-service verdicts: the connection is over.
    static func isConnectionFatal(_ error: any Error) -> Bool {
        error is NIOHTTP2Errors.ExcessiveRSTFrames || error is NIOHTTP2Errors.ExcessiveStreamErrors
            || error is NIOHTTP2Errors.ExcessiveNumberOfGlitches || error is NIOHTTP2Errors.ExcessiveControlFrames
            || error is NIOHTTP2Errors.ExcessiveEmptyDataFrames || error is NIOHTTP2Errors.ExcessiveContinuationFrames
            || error is NIOHTTP2Errors.ExcessiveOutboundFrameBuffering
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.update { state in
            state.isClosed = true
            if state.closeDetail == nil {
                state.closeDetail = state.goAway.map { "after the server's GOAWAY\($0.reason.map { " (\($0))" } ?? "")" }
                    ?? "by the server"
            }
        }
        settings.complete(.failure(GatewayError.connectionClosed("before the server's HTTP/2 SETTINGS arrived")))
        context.fireChannelInactive()
        // After the streams' own ends, which swift-nio-http2 delivers as the connection goes.
        let events = connection.events
        context.eventLoop.assumeIsolated().execute { events?(.closed) }
    }

    /// APNs puts `{"reason":"Shutdown"}` in GOAWAY's debug data.
    static func reason(_ data: ByteBuffer?) -> String? {
        guard var data, let bytes = data.readBytes(length: data.readableBytes), !bytes.isEmpty else { return nil }
        struct Body: Decodable { var reason: String? }
        if let body = try? JSONDecoder().decode(Body.self, from: Data(bytes)), let reason = body.reason { return reason }
        return String(decoding: bytes.prefix(200), as: UTF8.self)
    }

    static func name(_ parameter: HTTP2SettingsParameter) -> String {
        switch parameter {
        case .headerTableSize: "SETTINGS_HEADER_TABLE_SIZE"
        case .enablePush: "SETTINGS_ENABLE_PUSH"
        case .maxConcurrentStreams: "SETTINGS_MAX_CONCURRENT_STREAMS"
        case .initialWindowSize: "SETTINGS_INITIAL_WINDOW_SIZE"
        case .maxFrameSize: "SETTINGS_MAX_FRAME_SIZE"
        case .maxHeaderListSize: "SETTINGS_MAX_HEADER_LIST_SIZE"
        case .enableConnectProtocol: "SETTINGS_ENABLE_CONNECT_PROTOCOL"
        default: "SETTINGS_\(parameter)"
        }
    }

    static func name(_ code: HTTP2ErrorCode) -> String {
        switch code {
        case .noError: "NO_ERROR"
        case .protocolError: "PROTOCOL_ERROR"
        case .internalError: "INTERNAL_ERROR"
        case .flowControlError: "FLOW_CONTROL_ERROR"
        case .settingsTimeout: "SETTINGS_TIMEOUT"
        case .streamClosed: "STREAM_CLOSED"
        case .frameSizeError: "FRAME_SIZE_ERROR"
        case .refusedStream: "REFUSED_STREAM"
        case .cancel: "CANCEL"
        case .compressionError: "COMPRESSION_ERROR"
        case .connectError: "CONNECT_ERROR"
        case .enhanceYourCalm: "ENHANCE_YOUR_CALM"
        case .inadequateSecurity: "INADEQUATE_SECURITY"
        case .http11Required: "HTTP_1_1_REQUIRED"
        default: "0x\(String(code.networkCode, radix: 16))"
        }
    }
}

/// One request on its own stream.
struct StreamRequest: Sendable {
    var headers: HPACKHeaders
    var body: ByteBuffer?
    /// Nil: no timer per stream (the bulk sender watches whole connections instead, which
    /// costs nothing per notification).
    var timeout: TimeAmount?
    var timeoutSeconds: Double
}

/// How a stream ended: the server's answer, or an error and whether the request was written.
typealias StreamCompletion = @Sendable (Result<PushResponse, GatewayError>, _ written: Bool) -> Void

/// Lets a stream's completion run once, whichever of the stream and its opening fails first.
/// Both happen on the connection's event loop.
final class StreamCompletionOnce: @unchecked Sendable {
    private var completion: StreamCompletion?
    init(_ completion: @escaping StreamCompletion) { self.completion = completion }
    func call(_ result: Result<PushResponse, GatewayError>, _ written: Bool) {
        guard let completion else { return }
        self.completion = nil
        completion(result, written)
    }
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
        let body = request.body.flatMap { $0.readableBytes > 0 ? $0 : nil }
        context.write(wrapOutboundOut(.headers(.init(headers: request.headers, endStream: body == nil))), promise: nil)
        if let body {
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
        }
        context.flush()
        streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
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
        fail(GatewayError(.streamReset, "The server reset the stream (\(ConnectionObserver.name(code))) without answering.",
                          hint: "This is not what APNs does; check what listens at the gateway address."))
    }

    /// The error for a stream that got no answer: GOAWAY says whether it was processed.
    private func unansweredError(closing: Bool) -> GatewayError {
        if let goAway = connection.goAway {
            let processed = streamID.map { Int($0) <= goAway.lastStreamID } ?? false
            return .goAway(goAway, processed: processed)
        }
        if !closing {
            return GatewayError(.streamReset, "The server refused the stream (REFUSED_STREAM) without processing it.",
                                hint: "It was not processed; send it again.", isRetryable: true)
        }
        return .connectionClosed("before the answer arrived")
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        timeout?.cancel()
        connection.streamFinished()
        let latency = GatewayConnection.seconds(since: startedAt)
        guard let status else {
            completion(.failure(GatewayError(.http2Failed, "The server ended the stream without a :status.",
                                             hint: "This is not an APNs-compatible server.")), true)
            return
        }
        completion(.success(PushResponse(status: status, headers: responseHeaders, body: body, latency: latency)), true)
    }

    private func fail(_ error: GatewayError) {
        guard !finished else { return }
        finished = true
        timeout?.cancel()
        if started { connection.streamFinished() }
        completion(.failure(error), started)
    }
}

/// Opens a tunnel through an HTTP CONNECT proxy, then leaves the channel to TLS.
enum ProxyTunnel {
    static func open(on channel: any Channel, to endpoint: Endpoint, proxy: URL, timeout: TimeAmount) async throws {
        let result = OncePromise<Void>()
        let authorization: String? = proxy.user.map { user in
            let credentials = "\(user.removingPercentEncoding ?? user):\(proxy.password?.removingPercentEncoding ?? "")"
            return "Basic \(Data(credentials.utf8).base64EncodedString())"
        }
        try await channel.eventLoop.submit {
            let encoder = HTTPRequestEncoder()
            let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
            let handler = ProxyConnectHandler(target: endpoint.description, authorization: authorization, result: result,
                                              encoder: encoder, decoder: decoder)
            try channel.pipeline.syncOperations.addHandlers([encoder, decoder, handler])
            channel.eventLoop.scheduleTask(in: timeout) {
                if result.complete(.failure(GatewayError.proxyFailed("no answer to CONNECT in time"))) { channel.close(promise: nil) }
            }
        }.get()
        try await result.value
    }
}

final class ProxyConnectHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPClientRequestPart

    private let target: String
    private let authorization: String?
    private let result: OncePromise<Void>
    private let encoder: HTTPRequestEncoder
    private let decoder: ByteToMessageHandler<HTTPResponseDecoder>
    private var status: HTTPResponseStatus?

    init(target: String, authorization: String?, result: OncePromise<Void>, encoder: HTTPRequestEncoder,
         decoder: ByteToMessageHandler<HTTPResponseDecoder>) {
        self.target = target
        self.authorization = authorization
        self.result = result
        self.encoder = encoder
        self.decoder = decoder
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: target)
        head.headers.add(name: "Host", value: target)
        if let authorization { head.headers.add(name: "Proxy-Authorization", value: authorization) }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
        case .body:
            break
        case .end:
            guard let status, (200..<300).contains(status.code) else {
                let code = status.map { "\($0.code) \($0.reasonPhrase)" } ?? "no status"
                result.complete(.failure(GatewayError.proxyFailed("it answered CONNECT with \(code)")))
                context.close(promise: nil)
                return
            }
            let pipeline = context.pipeline.syncOperations
            pipeline.removeHandler(encoder, promise: nil)
            pipeline.removeHandler(decoder, promise: nil)
            pipeline.removeHandler(context: context, promise: nil)
            result.complete(.success(()))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        result.complete(.failure(GatewayError.proxyFailed("it closed the connection")))
        context.fireChannelInactive()
    }
}
