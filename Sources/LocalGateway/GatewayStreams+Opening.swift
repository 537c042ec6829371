import NIOCore
import NIOHTTP2

/// A stream's arrival: counted, and refused or cut as the faults and the advertised limit say.
extension GatewayStreams {
    /// A stream's first HEADERS: counts it, and refuses or cuts it as the faults and the
    /// advertised limit say. False when nothing more of it is to be read.
    func opened(_ streamID: HTTP2StreamID) -> Bool {
        streams[streamID] = Stream()
        firstRequestDeadline?.cancel()
        firstRequestDeadline = nil
        let next = state.streamOpened(streamID, batchLimit: batchLimit)
        let open = state.openStreams
        let inForce = state.limits.acknowledged
        let number = self.number
        let now = gateway.configuration.recordsStreamsInFlight ? context?.eventLoop.now : nil
        if open > maxOpenByLimit[inForce] ?? 0 {
            // This connection's largest so far: the gateway-wide maxima may grow.
            maxOpenByLimit[inForce] = open
            let key = String(inForce)
            gateway.updateState {
                $0.statistics.streams += 1
                $0.statistics.maxConcurrentStreamsObserved = max($0.statistics.maxConcurrentStreamsObserved, open)
                $0.statistics.maxConcurrentStreamsByLimit[key] = max(
                    $0.statistics.maxConcurrentStreamsByLimit[key] ?? 0,
                    open
                )
                if let now { $0.streamsInFlight?.set(number, open: open, at: now) }
            }
        } else {
            gateway.updateState {
                $0.statistics.streams += 1
                if let now { $0.streamsInFlight?.set(number, open: open, at: now) }
            }
        }
        switch next {
        case .read:
            return true
        case .closeConnection:
            gateway.updateStatistics { $0.connectionsClosedByFault += 1 }
            if let stream = streams[streamID] {
                stream.reading = false
                stream.refused = true
            }
            context?.channel.close(promise: nil)
            return false
        case .refuse(let calm):
            gateway.updateStatistics { $0.refusedStreams += 1 }
            refuse(streamID)
            perform(calm)
            return false
        }
    }

    /// Resets the stream with REFUSED_STREAM: not processed, safe for the client to send again.
    /// swift-nio-http2 then reports it closed with this code.
    func refuse(_ streamID: HTTP2StreamID) {
        if let stream = streams[streamID] {
            stream.reading = false
            stream.refused = true
        }
        guard let context, !isClosed else { return }
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.refusedStream))),
            promise: nil
        )
    }

    /// Streams closed: the gateway's record of streams in flight is told how many are still open.
    func noteStreamsInFlight(_ context: ChannelHandlerContext) {
        guard gateway.configuration.recordsStreamsInFlight else { return }
        let (number, open, now) = (self.number, state.openStreams, context.eventLoop.now)
        gateway.updateState { $0.streamsInFlight?.set(number, open: open, at: now) }
    }
}
