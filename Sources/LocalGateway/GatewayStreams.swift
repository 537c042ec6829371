import CredentialFormats
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import PushTransport

/// Serves a connection's streams at the HTTP/2 frame level: counts each against the
/// connection's limit, collects its request, answers as APNs would, and applies the
/// connection-level faults.
///
/// swift-nio-http2's multiplexer would give every stream a child channel with a pipeline of
/// its own; creating, activating and tearing those down (and their bookkeeping) was a large
/// share of the gateway's CPU per notification (docs/performance.md). Here a stream is an entry in a table keyed by
/// stream ID, and its answer is HEADERS (and DATA) frames written on the connection.
/// swift-nio-http2's connection handler still does everything else: stream states, HPACK,
/// flow control on what is sent, the stream limit it enforces once acknowledged, GOAWAY.
///
/// What the multiplexer did that is done here: giving back the receive windows (the
/// connection's as request bodies use it, a stream's while its request body is still
/// arriving), learning of closed streams from `StreamClosedEvent`, and answering the requests
/// completed during a batch of reads when the batch ends, so their answers leave together.
/// Everything here runs on the connection's event loop.
final class GatewayStreams: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A class, so that a request body grows in place rather than copied out of the table and back.
    final class Stream {
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []
        /// Its request is still being collected: the frames that come are read, and its
        /// window is given back.
        var reading = true
        /// Whether the body was read before the answer (not when answering early).
        var bodyRead = true
        /// Refused or cut by a fault: never answered.
        var refused = false
        /// Processed: decided and answered (or found above a GOAWAY's last stream).
        var answered = false
        /// Bytes of its headers and body the gateway holds, counted in ``bufferedBytes``.
        var held = 0
    }

    /// Both receive windows are topped up to this (HTTP/2's initial 65,535 bytes), once half
    /// of it is used, as swift-nio-http2's multiplexer does.
    static let targetWindowSize = 65_535

    let gateway: LocalGateway
    /// The connection's number, in the log's records.
    let number: Int
    /// The connection's lifecycle and bookkeeping: this handler does what its events say.
    var state: GatewayConnectionState
    /// Open streams by ID, from their first HEADERS until swift-nio-http2 reports them closed.
    var streams: [HTTP2StreamID: Stream] = [:]
    /// Streams closed during the batch of reads in progress. They still count as open until
    /// the batch ends: with the multiplexer, the requests of a batch reached their stream
    /// channels together at its end, so the streams a client sent together were open together,
    /// and that is what the statistics, the advertised limit's refusals and the idle timeout
    /// observe. Answering each request as it completes keeps swift-nio-http2's tables of open
    /// streams short (a stream removed out of order from a long one cost more than the child
    /// channel it replaced).
    private var closedInBatch = 0
    /// The limit advertised when the batch began: the streams of a batch are judged against
    /// it, as they were when all of them were opened before any was answered. A limit that an
    /// answer of the batch changes applies from the next batch (its SETTINGS still goes out
    /// before that answer).
    var batchLimit = Int.max
    var context: ChannelHandlerContext?
    /// Within a batch of reads: flushes wait for its end.
    private var inReadBatch = false
    private var flushPending = false
    var isClosed = false
    /// The most streams seen open at once on this connection under each acknowledged limit:
    /// the gateway's statistics need updating only when one of these grows.
    var maxOpenByLimit: [Int: Int] = [:]
    /// Windows given back whose WINDOW_UPDATE is not yet seen applied, with the size that was
    /// reported when it went out. swift-nio-http2 queues its window events with the window as it
    /// was when each was queued (a DATA frame and the stream's close each queue one for the
    /// connection), so the events queued before the WINDOW_UPDATE still show the window without
    /// it; giving back on those too credited the client twice. Only a WINDOW_UPDATE from here
    /// grows a receive window, so an event showing it grown is the first that is current.
    var creditPending: [HTTP2StreamID: Int] = [:]
    /// Headers and bodies of the requests still being collected, bounded by
    /// ``ConnectionBounds/maxBufferedRequestBytes``.
    private var bufferedBytes = 0
    /// Closes the connection if no request arrives within ``LocalGateway/Configuration/firstRequestTimeout``.
    var firstRequestDeadline: Scheduled<Void>?
    /// The connection is marked busy in the gateway's table (an answer is awaited): it is not
    /// shed at the cap. When it last told the table it was idle: at most once a second, so that
    /// its place among the idle connections follows its last answer without a lock per answer.
    private var markedBusy = false
    private var markedIdleAt = NIODeadline.uptimeNanoseconds(0)

    init(gateway: LocalGateway, number: Int, state: GatewayConnectionState) {
        self.gateway = gateway
        self.number = number
        self.state = state
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        startFirstRequestDeadline(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        firstRequestDeadline?.cancel()
        firstRequestDeadline = nil
        self.context = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !inReadBatch {
            inReadBatch = true
            batchLimit = state.limits.advertised
        }
        // Given up on: what is still arriving in this batch of reads is not served.
        guard !state.isCalmed else { return }
        let frame = unwrapInboundIn(data)
        let streamID = frame.streamID
        guard streamID != .rootStream else {
            context.fireChannelRead(data)  // SETTINGS, GOAWAY, PING: the connection's observer
            return
        }
        switch frame.payload {
        case .headers(let head):
            if streams[streamID] == nil {
                guard opened(streamID) else { return }
            }
            guard let stream = streams[streamID], stream.reading else { return }
            if stream.headers.isEmpty {
                stream.headers = head.headers.map { (name: $0.name, value: $0.value) }
                // As SETTINGS_MAX_HEADER_LIST_SIZE counts them: 32 bytes of overhead a field.
                hold(stream, stream.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 })
                if state.isCalmed { return }
            }
            if head.endStream {
                complete(stream, streamID, bodyRead: true)
            } else if gateway.configuration.faults.answerEarlyAndReset {
                complete(stream, streamID, bodyRead: false)
            }
        case .data(let payload):
            guard let stream = streams[streamID], stream.reading else { return }
            if case .byteBuffer(let buffer) = payload.data, buffer.readableBytes > 0 {
                stream.body.append(contentsOf: buffer.readableBytesView)
                hold(stream, buffer.readableBytes)
                if state.isCalmed { return }
                if stream.body.count > 64 * 1024 {  // far beyond any limit: stop reading, answer now
                    complete(stream, streamID, bodyRead: true)
                    return
                }
            }
            if payload.endStream { complete(stream, streamID, bodyRead: true) }
        case .rstStream:
            // Reset before its answer: the rapid-reset attack, when it is done thousands of times.
            if let stream = streams[streamID], !stream.answered {
                perform(state.earlyReset(at: context.eventLoop.now))
            }
        case .priority:
            perform(state.controlFrameReceived(at: context.eventLoop.now))
        default:
            break
        }
    }

    /// Counts bytes held for a request still being collected; a connection holding more than
    /// its bound of them is answered with GOAWAY ENHANCE_YOUR_CALM and closed.
    private func hold(_ stream: Stream, _ bytes: Int) {
        stream.held += bytes
        bufferedBytes += bytes
        if bufferedBytes > ConnectionBounds.maxBufferedRequestBytes { perform(state.calm()) }
    }

    private func release(_ stream: Stream) {
        bufferedBytes -= stream.held
        stream.held = 0
    }

    /// The request is complete (or, answering early, as complete as it will be): answered now.
    private func complete(_ stream: Stream, _ streamID: HTTP2StreamID, bodyRead: Bool) {
        stream.reading = false
        stream.bodyRead = bodyRead
        respond(streamID)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inReadBatch = false
        let closed = closedInBatch
        closedInBatch = 0
        if let goAway = state.readBatchEnded(closedStreams: closed) { perform(goAway) }
        if closed > 0 { noteStreamsInFlight(context) }
        if flushPending {
            flushPending = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }

    /// swift-nio-http2's events about streams and windows end here: several arrive for every
    /// notification, and nothing after this handler wants them (passing each on through the
    /// observer's type checks was a noticeable share of the CPU per notification).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let window = userEvent(event, as: NIOHTTP2WindowUpdatedEvent.self) {
            if let size = window.inboundWindowSize { giveBackWindow(window.streamID, size: size, context: context) }
        } else if let closed = userEvent(event, as: StreamClosedEvent.self) {
            creditPending[closed.streamID] = nil
            if let stream = streams.removeValue(forKey: closed.streamID) {
                release(stream)
                if inReadBatch { closedInBatch += 1 }
                state.streamClosed(closed.streamID, countNow: !inReadBatch)
                if !inReadBatch { noteStreamsInFlight(context) }
            }
        } else if !(event is NIOHTTP2StreamCreatedEvent) {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        firstRequestDeadline?.cancel()
        firstRequestDeadline = nil
        state.closed(openStreams: streams.count + closedInBatch)
        gateway.connectionClosed(number)
        closedInBatch = 0
        streams.removeAll()
        bufferedBytes = 0
        context.fireChannelInactive()
    }

    /// Nothing awaits an answer: the connection may be shed at the cap, after those idle longer.
    private func noteIdle(_ context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        guard markedBusy || now - markedIdleAt > .seconds(1) else { return }
        markedBusy = false
        markedIdleAt = now
        gateway.connectionBecameIdle(number)
    }

    /// Flushes now, or at the end of the batch of reads in progress, so that the answers to a
    /// batch of requests leave together.
    func flush(context: ChannelHandlerContext) {
        if inReadBatch {
            flushPending = true
        } else {
            context.flush()
        }
    }

    private func respond(_ streamID: HTTP2StreamID) {
        guard let stream = streams[streamID], !stream.refused, !stream.answered, let context else { return }
        stream.answered = true
        let bodyRead = stream.bodyRead
        let request = IncomingRequest(headers: stream.headers, body: stream.body, bodyRead: bodyRead)
        stream.headers = []
        stream.body = []
        release(stream)
        switch state.requestComplete(streamID) {
        case .ignore:
            return
        case .refuse:
            // Such streams are normally refused before the GOAWAY goes out (see
            // GatewayConnectionState.GoAway); this one's request completed after.
            gateway.updateStatistics { $0.refusedAfterGoAway += 1 }
            refuse(streamID)
            return
        case .process:
            break
        }
        let decision = gateway.evaluate(request, certificate: state.identity.certificate)
        let latency = gateway.configuration.faults.latency
        if latency > 0 {
            // Its answer is awaited: the connection is not shed meanwhile.
            if !markedBusy {
                markedBusy = true
                gateway.connectionBecameBusy(number)
            }
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(latency * 1e9))) { [self] in
                write(decision, streamID: streamID, early: !bodyRead)
            }
        } else {
            write(decision, streamID: streamID, early: !bodyRead)
        }
    }

    private func write(_ decision: Decision, streamID: HTTP2StreamID, early: Bool) {
        guard let context, !isClosed, streams[streamID] != nil, state.lifecycle != .cut else {
            if state.answerAbandoned() { closeLingering() }
            return
        }
        if dropsAnswer(to: decision, context: context) { return }
        if var record = decision.record, gateway.validator.recordsNotifications {
            record["connection"] = number
            // What is answered 200 is in the log first; what cannot be logged is not accepted.
            // The line is written off the event loop: the answer goes out once it is in the file.
            if let logged = gateway.log(record, on: context.eventLoop) {
                logged.assumeIsolated().whenSuccess { [self] written in
                    answer(written ? decision : gateway.unrecorded(decision), streamID: streamID, early: early)
                }
                return
            }
        }
        answer(decision, streamID: streamID, early: early)
    }

    /// Answers a decision whose line, if any, is in the log.
    ///
    /// A connection the drop fault cut still answers what was recorded before the cut (its line
    /// was being written when the fault came): those notifications were processed, and only the
    /// one answer the fault takes may be lost. Nothing is processed after the cut (``write``
    /// refuses), and the connection closes once the dropped line is written, after every line
    /// before it.
    private func answer(_ decision: Decision, streamID: HTTP2StreamID, early: Bool) {
        guard let context, !isClosed, streams[streamID] != nil else {
            // Its line is in the log: delivered, though the client will never hear of it.
            if decision.record != nil { gateway.delivered(decision) }
            if state.answerAbandoned() { closeLingering() }
            return
        }
        if decision.record != nil {
            gateway.delivered(decision)
        } else if let reason = decision.reason {
            gateway.updateStatistics { $0.rejected[reason.rawValue, default: 0] += 1 }
        }

        // A changed limit goes out before the answer that earns it, so a client that has the
        // answer also has the new limit.
        let next = state.answering(
            status: decision.status,
            tokenAccepted: decision.tokenAccepted,
            inReadBatch: inReadBatch
        )
        if let limit = next.settings { advertise(limit) }
        if state.awaitingAnswer == 0 { noteIdle(context) }

        let (responseHeaders, bodyBytes) = AnswerEncoding.encode(decision, gateway: gateway)
        context.write(
            wrapOutboundOut(
                HTTP2Frame(
                    streamID: streamID,
                    payload: .headers(.init(headers: responseHeaders, endStream: bodyBytes.isEmpty))
                )
            ),
            promise: nil
        )
        // As nginx: answered early, the unread request body is not wanted, and the stream is
        // reset with NO_ERROR once the answer is complete. The stream may already count as
        // closed then (the body's END_STREAM can arrive in the same read); swift-nio-http2 always
        // lets a RST_STREAM out.
        let reset = early ? HTTP2Frame(streamID: streamID, payload: .rstStream(.noError)) : nil
        if !bodyBytes.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: bodyBytes)
            // The DATA frame waits in swift-nio-http2's flow-control buffer until a flush (and
            // the client's window) lets it out, while a RST_STREAM goes straight through and
            // drops what the stream still buffers: the reset is written only once the DATA,
            // which holds the rejection's reason, has left.
            let written = reset.map { _ in context.eventLoop.makePromise(of: Void.self) }
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(buffer), endStream: true)))
                ),
                promise: written
            )
            if let reset, let written {
                written.futureResult.assumeIsolated().whenSuccess { [self] in
                    guard let context = self.context, !isClosed else { return }
                    context.write(wrapOutboundOut(reset), promise: nil)
                    flush(context: context)
                }
            }
        } else if let reset {
            context.write(wrapOutboundOut(reset), promise: nil)
        }
        flush(context: context)
        perform(next.goAway)
        if next.close { closeLingering() }
    }
}
