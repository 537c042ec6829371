import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import PushCredentials
import PushGateway

/// Serves one stream: counts it against the connection's limit, collects the request,
/// answers as APNs would, and applies the connection-level faults.
final class GatewayStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let gateway: LocalGateway
    private let connection: GatewayConnectionState
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []
    private var counted = false
    private var refused = false
    private var answered = false

    init(gateway: LocalGateway, connection: GatewayConnectionState) {
        self.gateway = gateway
        self.connection = connection
    }

    private var streamID: HTTP2StreamID?

    func handlerAdded(context: ChannelHandlerContext) {
        let faults = gateway.configuration.faults
        let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
        self.streamID = streamID
        connection.streamsSeen += 1
        connection.openStreams += 1
        counted = true
        let open = connection.openStreams
        let inForce = String(connection.acknowledgedLimit)
        gateway.updateStatistics {
            $0.streams += 1
            $0.maxConcurrentStreamsObserved = max($0.maxConcurrentStreamsObserved, open)
            $0.maxConcurrentStreamsByLimit[inForce] = max($0.maxConcurrentStreamsByLimit[inForce] ?? 0, open)
        }
        if let limit = faults.closeAfterStreams, connection.streamsSeen > limit {
            // Abruptly, mid-request: no answer, no GOAWAY.
            gateway.updateStatistics { $0.connectionsClosedByFault += 1 }
            refused = true
            connection.channel.close(promise: nil)
            return
        }
        if open > connection.advertisedLimit {
            // Above the limit we advertised (possible while a lowered limit is not yet
            // acknowledged): refuse without processing, so the client may retry it.
            gateway.updateStatistics { $0.refusedStreams += 1 }
            refuse()
            return
        }
        if let streamID { connection.unprocessed[streamID] = self }
    }

    /// Resets the stream with REFUSED_STREAM: not processed, safe for the client to send again.
    ///
    /// The frame goes out on the connection, not through the stream channel: a stream channel
    /// that is not yet active only buffers its writes, and closing it (or letting it close)
    /// makes swift-nio-http2 send RST_STREAM CANCEL instead and drop the buffered frame. On the
    /// connection, the RST_STREAM passes the state machine at once, which then closes the
    /// stream channel itself with this code.
    func refuse() {
        refused = true
        guard let streamID else { return }
        connection.unprocessed[streamID] = nil
        connection.channel.writeAndFlush(
            HTTP2Frame(streamID: streamID, payload: .rstStream(.refusedStream)),
            promise: nil
        )
    }

    func channelInactive(context: ChannelHandlerContext) {
        if counted {
            counted = false
            connection.openStreams -= 1
        }
        if let streamID, connection.unprocessed[streamID] === self { connection.unprocessed[streamID] = nil }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused, !answered else { return }
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if headers.isEmpty {
                headers = frame.headers.map { (name: $0.name, value: $0.value) }
            }
            if frame.endStream {
                respond(context: context, bodyRead: true)
            } else if gateway.configuration.faults.answerEarlyAndReset {
                respond(context: context, bodyRead: false)
            }
        case .data(let frame):
            if case .byteBuffer(var buffer) = frame.data, let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body += bytes
                if body.count > 64 * 1024 {  // far beyond any limit: stop reading, answer now
                    respond(context: context, bodyRead: true)
                    return
                }
            }
            if frame.endStream { respond(context: context, bodyRead: true) }
        default:
            break
        }
    }

    private func respond(context: ChannelHandlerContext, bodyRead: Bool) {
        guard !answered else { return }
        answered = true
        if let streamID { connection.unprocessed[streamID] = nil }
        if connection.dropped { return }  // being cut: nothing more is processed or answered
        let streamID = self.streamID ?? .rootStream
        if let last = connection.lastStreamID, streamID > last {
            // Above the last stream our GOAWAY named: not processed, as RFC 9113 section 6.8
            // promises; the client sends it again on a new connection. (Such streams are
            // normally refused before the GOAWAY goes out; see afterAnswer.)
            gateway.updateStatistics { $0.refusedAfterGoAway += 1 }
            refuse()
            return
        }
        connection.highestProcessed = max(connection.highestProcessed, streamID)
        connection.awaitingAnswer += 1
        let request = IncomingRequest(headers: headers, body: body, bodyRead: bodyRead)
        let decision = gateway.evaluate(request, certificate: connection.clientCertificate())
        let latency = gateway.configuration.faults.latency
        if latency > 0 {
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(latency * 1e9))) { [self] in
                write(decision, context: context, early: !bodyRead)
            }
        } else {
            write(decision, context: context, early: !bodyRead)
        }
    }

    private func write(_ decision: Decision, context: ChannelHandlerContext, early: Bool) {
        connection.awaitingAnswer -= 1
        guard context.channel.isActive, !connection.dropped else {
            closeIfGoneAway()
            return
        }
        if let limit = gateway.configuration.faults.dropAfterAccepted, decision.record != nil,
            gateway.takeDrop(atAccepted: limit)
        {
            // Processed and recorded, then the connection is cut before the answer goes out:
            // the client cannot know it was delivered. Answers already written still leave, and
            // nothing more is processed on this connection, so this is the only answer lost.
            var record = decision.record ?? [:]
            record["connection"] = connection.number
            record["answer_dropped"] = true
            gateway.log(record)
            gateway.updateStatistics {
                $0.accepted += 1
                $0.answersDropped.append(decision.apnsID)
            }
            connection.dropped = true
            let channel = connection.channel
            channel.flush()
            channel.eventLoop.scheduleTask(in: .milliseconds(50)) { channel.close(promise: nil) }
            return
        }
        if let record = decision.record {
            var record = record
            record["connection"] = connection.number
            gateway.log(record)
            gateway.updateStatistics { $0.accepted += 1 }
        } else if let reason = decision.reason {
            gateway.updateStatistics { $0.rejected[reason.rawValue, default: 0] += 1 }
        }

        // The ids are new for every answer: not worth a place in the HPACK table.
        var responseHeaders = HPACKHeaders()
        responseHeaders.add(name: ":status", value: String(decision.status))
        responseHeaders.add(name: decision.idHeader, value: decision.apnsID, indexing: .nonIndexable)
        for (name, value) in decision.extraHeaders { responseHeaders.add(name: name, value: value) }
        if decision.status == 200, decision.isNotification, gateway.configuration.environment == .sandbox {
            responseHeaders.add(
                name: APNsHeader.uniqueID,
                value: gateway.validator.randomUUIDString(),
                indexing: .nonIndexable
            )
        }
        var bodyBytes: [UInt8] = []
        if let reason = decision.reason {
            var object: [String: Any] = ["reason": reason.rawValue]
            if let timestamp = decision.timestamp { object["timestamp"] = timestamp }
            bodyBytes = (try? [UInt8](JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))) ?? []
            responseHeaders.add(name: "content-type", value: "application/json; charset=utf-8")
            responseHeaders.add(name: "content-length", value: String(bodyBytes.count))
        } else if let body = decision.body {
            bodyBytes = body
            responseHeaders.add(name: "content-type", value: "application/json")
            responseHeaders.add(name: "content-length", value: String(bodyBytes.count))
        }
        context.write(
            wrapOutboundOut(.headers(.init(headers: responseHeaders, endStream: bodyBytes.isEmpty))),
            promise: nil
        )
        if !bodyBytes.isEmpty {
            let buffer = context.channel.allocator.buffer(bytes: bodyBytes)
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        }
        // A changed limit goes out before the answer that earns it, so a client that has the
        // answer also has the new limit.
        if decision.status == 200 { connection.accepted += 1 }
        if decision.tokenAccepted { connection.awaitingToken = false }
        if gateway.configuration.dynamics.singleStreamAfterRejection {
            if (400..<500).contains(decision.status) {
                connection.afterRejection = true
            } else if decision.status == 200 {
                connection.afterRejection = false
            }
        }
        changeLimitIfDue()
        context.flush()
        if early, let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID) {
            // As nginx: the answer is complete; the unread request body is not wanted. Sent on
            // the connection, because the stream may already count as closed here (the body's
            // END_STREAM can arrive in the same read), and swift-nio-http2 always lets a
            // RST_STREAM out; the client sees what nginx's clients see.
            connection.channel.writeAndFlush(
                HTTP2Frame(streamID: streamID, payload: .rstStream(.noError)),
                promise: nil
            )
        }
        afterAnswer(context: context)
    }

    private func changeLimitIfDue() {
        let faults = gateway.configuration.faults
        if let change = faults.changeMaxConcurrentStreams, !connection.limitChanged,
            connection.accepted >= change.afterAccepted
        {
            connection.limitChanged = true
            connection.configuredLimit = change.to
        }
        connection.advertiseIfChanged(gateway)
    }

    /// Connection-level faults that follow an answer.
    private func afterAnswer(context: ChannelHandlerContext) {
        let faults = gateway.configuration.faults
        connection.answered += 1
        if let limit = faults.goAwayAfterStreams, connection.answered >= limit, !connection.goingAway {
            // As APNs: the last stream named is the highest one processed; those still being
            // answered (added latency) are answered before the connection closes.
            connection.goAway(reason: faults.goAwayReason, gateway: gateway)
        }
        closeIfGoneAway()
    }

    private func closeIfGoneAway() { connection.closeIfGoneAway() }
}
