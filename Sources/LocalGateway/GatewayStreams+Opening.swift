import NIOCore
import NIOHTTP2

/// A stream's arrival: counted, and refused or cut as the faults and the advertised limit say.
extension GatewayStreams {
    /// A stream's first HEADERS: counts it, and refuses or cuts it as the faults and the
    /// advertised limit say. False when nothing more of it is to be read.
    func opened(_ streamID: HTTP2StreamID) -> Bool {
        let faults = gateway.configuration.faults
        streams[streamID] = Stream()
        connection.streamsSeen += 1
        connection.openStreams += 1
        let open = connection.openStreams
        let inForce = connection.acknowledgedLimit
        if open > maxOpenByLimit[inForce] ?? 0 {
            // This connection's largest so far: the gateway-wide maxima may grow.
            maxOpenByLimit[inForce] = open
            let key = String(inForce)
            gateway.updateStatistics {
                $0.streams += 1
                $0.maxConcurrentStreamsObserved = max($0.maxConcurrentStreamsObserved, open)
                $0.maxConcurrentStreamsByLimit[key] = max($0.maxConcurrentStreamsByLimit[key] ?? 0, open)
            }
        } else {
            gateway.updateStatistics { $0.streams += 1 }
        }
        if let limit = faults.closeAfterStreams, connection.streamsSeen > limit {
            // Abruptly, mid-request: no answer, no GOAWAY.
            gateway.updateStatistics { $0.connectionsClosedByFault += 1 }
            if let stream = streams[streamID] {
                stream.reading = false
                stream.refused = true
            }
            connection.channel.close(promise: nil)
            return false
        }
        if open > batchLimit {
            // Above the limit we advertised (possible while a lowered limit is not yet
            // acknowledged): refuse without processing, so the client may retry it.
            gateway.updateStatistics { $0.refusedStreams += 1 }
            refuse(streamID)
            // A client sees the lowered limit before the refusals it causes and acknowledges it:
            // it can be refused about as many streams as it had in flight, not thousands more.
            connection.refusedSinceAcknowledgement += 1
            if connection.refusedSinceAcknowledgement
                > ConnectionBounds.maxRefusedBeforeAcknowledgement(
                    gateway.configuration.faults.maxConcurrentStreams,
                    everAcknowledged: connection.everAcknowledged
                )
            {
                connection.calm()
            }
            return false
        }
        connection.unprocessed.insert(streamID)
        return true
    }

    /// Resets the stream with REFUSED_STREAM: not processed, safe for the client to send again.
    /// swift-nio-http2 then reports it closed with this code.
    func refuse(_ streamID: HTTP2StreamID) {
        if let stream = streams[streamID] {
            stream.reading = false
            stream.refused = true
        }
        connection.unprocessed.remove(streamID)
        guard let context, !isClosed else { return }
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.refusedStream))),
            promise: nil
        )
    }

}
