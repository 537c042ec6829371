import Dispatch
import NIOCore
import NIOHPACK
import NIOHTTP2
import PushGateway
import PushTransport

/// The bulk sender's notifications as HTTP/2 streams driven at the connection's frame level.
///
/// swift-nio-http2's multiplexer gives each stream a child channel with its own pipeline; for a
/// bulk run that was the largest single cost (creating, activating and tearing down a channel
/// per notification: half the client's CPU in the profile in docs/performance.md). Here a
/// notification is two frames written on the connection (HEADERS, then DATA with END_STREAM)
/// and an entry in a table keyed by stream ID; the answer's frames come back up the same
/// pipeline. swift-nio-http2's connection handler still does everything else: stream states,
/// HPACK, flow control on what is sent, the server's SETTINGS_MAX_CONCURRENT_STREAMS (streams
/// above it wait in its buffer), GOAWAY.
///
/// What the multiplexer did that is done here: stream IDs (odd, increasing, in writing order)
/// and giving back the connection's receive window (WINDOW_UPDATE on stream 0) as answers'
/// bodies use it.
///
/// The answer is complete at END_STREAM. A server may answer before reading the request body
/// and then reset the stream with NO_ERROR (RFC 9113 section 8.1; nginx does this): once the
/// answer is in, that reset is not even reported. This handler judges nothing: what an ending
/// means is the engine's decision. Everything here runs on the connection's event loop.
final class FrameStreams: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    enum Outcome {
        case answered(PushResponse)
        case reset(BulkEngine.ResetCode)
        /// Ended with neither: the connection closed or went away, or the stream was cancelled.
        case closed
    }

    private struct Entry {
        let sendID: BulkEngine.SendID
        let startedAt: DispatchTime
        var status: Int?
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        /// Its end came before the whole body: the answer waits one turn of the loop for it.
        var awaitingBody = false
    }

    /// An answer's body is a short JSON object; more than this is not kept.
    static let bodyLimit = 16_384
    /// The connection's receive window is topped up once this much of it has been used (half
    /// of HTTP/2's initial 65,535 bytes, as swift-nio-http2's own window manager does).
    static let windowUpdateThreshold = 32_768

    private let ended: (BulkEngine.SendID, Outcome) -> Void
    private var context: ChannelHandlerContext?
    private var nextStreamID = 1
    private var streams: [HTTP2StreamID: Entry] = [:]
    private var unacknowledgedBytes = 0
    private var isClosed = false

    /// `ended` hears once of every stream opened, on the event loop.
    init(ended: @escaping (BulkEngine.SendID, Outcome) -> Void) {
        self.ended = ended
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Writes one notification on a new stream (flushed at the end of the caller's batch) and
    /// returns its stream ID, or nil when the connection can take no more streams.
    func open(_ sendID: BulkEngine.SendID, headers: HPACKHeaders, body: ByteBuffer) -> HTTP2StreamID? {
        guard let context, !isClosed, nextStreamID <= Int(Int32.max) else { return nil }
        let streamID = HTTP2StreamID(nextStreamID)
        nextStreamID += 2
        streams[streamID] = Entry(sendID: sendID, startedAt: DispatchTime.now())
        let hasBody = body.readableBytes > 0
        // A HEADERS write fails when swift-nio-http2 drops the stream before it was sent (held
        // above the server's limit when the connection went away).
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(
            wrapOutboundOut(
                HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: !hasBody)))
            ),
            promise: written
        )
        if hasBody {
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(body), endStream: true)))
                ),
                promise: nil
            )
        }
        context.flush()
        written.futureResult.whenFailure { [self] _ in end(streamID, .closed) }
        return streamID
    }

    /// Cancels a stream still waiting for its answer (RST_STREAM CANCEL); it ends as closed.
    /// Found by a search of the streams in flight: a request timing out is rare, and a second
    /// table kept for it would cost two more hash-table updates per notification.
    func cancel(_ sendID: BulkEngine.SendID) {
        guard let streamID = streams.first(where: { $0.value.sendID == sendID })?.key else { return }
        if let context, !isClosed {
            context.writeAndFlush(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))),
                promise: nil
            )
        }
        end(streamID, .closed)
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let streamID = frame.streamID
        guard streamID != .rootStream else {
            context.fireChannelRead(data)  // SETTINGS, GOAWAY, PING: the connection's observer
            return
        }
        switch frame.payload {
        case .headers(let head):
            guard let status = streams[streamID]?.status == nil ? Self.finalStatus(head.headers) : nil else {
                if head.endStream { answer(streamID) }  // trailers, or an ending after 1xx only
                return
            }
            let headers = head.headers.map { ($0.name, $0.value) }
            if head.endStream {
                // The whole answer in one frame, as APNs sends every 200: answered without being
                // written into the table first.
                answer(streamID, status: status, headers: headers, body: [])
            } else {
                streams[streamID]?.status = status
                streams[streamID]?.headers = headers
            }
        case .data(let payload):
            let length = payload.data.readableBytes
            acknowledge(length + (payload.paddingBytes.map { $0 + 1 } ?? 0), context: context)
            if length > 0, case .byteBuffer(let buffer) = payload.data, let kept = streams[streamID]?.body.count,
                kept < Self.bodyLimit
            {
                let bytes = buffer.readableBytesView.prefix(Self.bodyLimit - kept)
                streams[streamID]?.body.append(contentsOf: bytes)
            }
            if payload.endStream { answer(streamID) }
        case .rstStream(let code):
            reset(streamID, code)
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = userEvent(event, as: StreamClosedEvent.self), streams[closed.streamID] != nil {
            // Dropped by a GOAWAY (CANCEL), or closed with no END_STREAM seen here.
            if let reason = closed.reason { reset(closed.streamID, reason) } else { answer(closed.streamID) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let closed = error as? NIOHTTP2Errors.StreamClosed { reset(closed.streamID, closed.errorCode) }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        for streamID in Array(streams.keys).sorted(by: { Int($0) < Int($1) }) { end(streamID, .closed) }
        context.fireChannelInactive()
    }

    /// Gives the connection's receive window back once half of it is used: the answers' bodies
    /// would otherwise stop the server after 64 KiB of them.
    private func acknowledge(_ bytes: Int, context: ChannelHandlerContext) {
        guard bytes > 0 else { return }
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= Self.windowUpdateThreshold, !isClosed else { return }
        let increment = unacknowledgedBytes
        unacknowledgedBytes = 0
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))),
            promise: nil
        )
    }

    private func reset(_ streamID: HTTP2StreamID, _ code: HTTP2ErrorCode) {
        guard let entry = streams[streamID] else { return }
        if code == .noError, entry.status != nil {
            answer(streamID)  // an answer without END_STREAM, then NO_ERROR: take what came
            return
        }
        switch code {
        case .noError: end(streamID, .reset(.noError))
        case .refusedStream: end(streamID, .reset(.refusedStream))
        default: end(streamID, .reset(.other(code.http2Name)))
        }
    }

    /// A final (not 1xx) `:status`.
    private static func finalStatus(_ headers: HPACKHeaders) -> Int? {
        guard let text = headers.first(name: ":status"), let code = Int(text), code >= 200 else { return nil }
        return code
    }

    private func answer(_ streamID: HTTP2StreamID) {
        guard let entry = streams[streamID] else { return }
        guard let status = entry.status else {
            end(streamID, .reset(.other("an answer without :status")))
            return
        }
        answer(streamID, status: status, headers: entry.headers, body: entry.body)
    }

    private func answer(_ streamID: HTTP2StreamID, status: Int, headers: [(String, String)], body: [UInt8]) {
        guard let entry = streams[streamID] else { return }
        // The stream's end (its close event, or a RST_STREAM NO_ERROR) can be reported before
        // the DATA frame of the same read that holds the reason: a rejection whose body is not
        // all here yet waits one turn of the loop, by which time that frame has been read.
        if status != 200, !entry.awaitingBody, let loop = context?.eventLoop,
            body.count < headers.first(where: { $0.0 == "content-length" }).flatMap({ Int($0.1) }) ?? 0
        {
            streams[streamID]?.awaitingBody = true
            loop.assumeIsolated().execute { [self] in answer(streamID) }
            return
        }
        // A rejection whose body (its reason) never came in full is still the server's answer:
        // its `:status` decides, as APNs' own status codes do without a reason (a 4xx is final,
        // a 429 or 5xx is sent again). Sending it again only to learn the reason would deliver
        // it twice if the server took it after all.
        let latency = GatewayConnection.seconds(since: entry.startedAt)
        end(
            streamID,
            .answered(PushResponse(status: status, headers: headers, body: body, latency: latency))
        )
    }

    private func end(_ streamID: HTTP2StreamID, _ outcome: Outcome) {
        guard let entry = streams.removeValue(forKey: streamID) else { return }
        switch outcome {
        case .answered, .reset(.refusedStream), .reset(.noError):
            ended(entry.sendID, outcome)
        case .reset, .closed:
            // What a stream cut off without an answer means depends on a GOAWAY, and swift-nio-http2
            // closes the streams a GOAWAY drops (with CANCEL) before the GOAWAY itself reaches the
            // connection's handlers: report on the next tick, when the GOAWAY is known.
            let ended = self.ended
            let sendID = entry.sendID
            if let loop = context?.eventLoop {
                loop.assumeIsolated().execute { ended(sendID, outcome) }
            } else {
                ended(sendID, outcome)
            }
        }
    }
}
