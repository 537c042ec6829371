import Foundation
import NIOCore
import NIOHTTP2

/// What the connection's state machine says to do, done on the connection.
extension GatewayStreams {
    /// The stream limit APNs would advertise has changed: SETTINGS, flushed at once, so that
    /// it leaves before the answer being written (the client has the new limit first).
    func advertise(_ limit: Int) {
        guard let context else { return }
        gateway.updateStatistics { $0.settingsChanges += 1 }
        let settings = HTTP2Frame(
            streamID: .rootStream,
            payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: limit)]))
        )
        context.writeAndFlush(wrapOutboundOut(settings), promise: nil)
    }

    func perform(_ decided: GatewayConnectionState.OnGoAway) {
        switch decided {
        case .none:
            return
        case .deferred:
            gateway.updateStatistics { $0.goAwaysSent += 1 }
        case .send(let goAway):
            gateway.updateStatistics { $0.goAwaysSent += 1 }
            perform(goAway)
        }
    }

    /// GOAWAY NO_ERROR with APNs' JSON reason unless turned off, the streams above its last
    /// one refused first.
    func perform(_ goAway: GatewayConnectionState.GoAway) {
        for streamID in goAway.refused {
            gateway.updateStatistics { $0.refusedAfterGoAway += 1 }
            refuse(streamID)
        }
        if let context {
            let frame = HTTP2Frame(
                streamID: .rootStream,
                payload: .goAway(
                    lastStreamID: goAway.lastStreamID,
                    errorCode: .noError,
                    opaqueData: gateway.goAwayDebugData(reason: goAway.reason, allocator: context.channel.allocator)
                )
            )
            context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        }
        if goAway.thenClose { closeLingering() }
    }

    /// GOAWAY ENHANCE_YOUR_CALM. The connection guard closes the connection once it is
    /// written; the deadline covers a GOAWAY that cannot be written.
    func perform(_ calm: GatewayConnectionState.OnCalm) {
        guard case .sendGoAway(let last) = calm, let context else { return }
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: last, errorCode: .enhanceYourCalm, opaqueData: nil)
        )
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        let channel = context.channel
        context.eventLoop.assumeIsolated().scheduleTask(in: ConnectionBounds.goAwayFlushDeadline) {
            channel.close(promise: nil)
        }
    }

    /// After GOAWAY, every processed stream answered: a lingering close, as nginx does. Closing
    /// while the client is still sending makes the kernel answer with a reset, and a reset can
    /// discard the GOAWAY still waiting to be read on the client's side, which then cannot tell
    /// processed from unprocessed. A moment for the GOAWAY to arrive and the client to stop (or
    /// close first) avoids that.
    func closeLingering() {
        guard let context else { return }
        let channel = context.channel
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
    }

    // MARK: Events the connection's observer sees

    func settingsAcknowledged() { state.settingsAcknowledged() }

    /// A PING, SETTINGS or PRIORITY the client started. False when the client was given up on.
    func controlFrameReceived(at now: NIODeadline) -> Bool {
        let calm = state.controlFrameReceived(at: now)
        perform(calm)
        return calm == .none
    }

    func shutdown() { perform(state.shutdown()) }

    func idleTimedOut() {
        let decided = state.idleTimedOut()
        if decided != .none { gateway.updateStatistics { $0.idleConnectionsClosed += 1 } }
        perform(decided)
    }

    /// A new connection takes this one's place at the cap: GOAWAY `IdleTimeout` (APNs' reason for
    /// a connection closed for doing nothing), then closed at once when nothing is in flight. A
    /// request that arrived meanwhile is still answered, and the close follows its answer.
    func shed() {
        perform(state.goAway(reason: "IdleTimeout", deferred: false))
        if streams.isEmpty, state.awaitingAnswer == 0 { context?.close(promise: nil) }
    }

    /// Starts the deadline for the connection's first request, from the end of its handshake.
    func startFirstRequestDeadline(_ context: ChannelHandlerContext) {
        guard let seconds = gateway.configuration.firstRequestTimeout, seconds > 0 else { return }
        firstRequestDeadline = context.eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(Int64(seconds * 1e9))
        ) { [weak self] in
            self?.firstRequestOverdue()
        }
    }

    /// No request within the deadline (the client may have sent PINGs or SETTINGS, which keep the
    /// idle timeout away): GOAWAY `IdleTimeout`, then closed.
    private func firstRequestOverdue() {
        firstRequestDeadline = nil
        guard state.streamsSeen == 0, !isClosed else { return }
        let decided = state.goAway(reason: "IdleTimeout", deferred: false)
        guard decided != .none else { return }
        gateway.updateStatistics { $0.firstRequestTimeouts += 1 }
        perform(decided)
        // Also when the GOAWAY cannot be written (a client that never sent its preface).
        if let channel = context?.channel {
            channel.eventLoop.assumeIsolated().scheduleTask(in: ConnectionBounds.goAwayFlushDeadline) {
                channel.close(promise: nil)
            }
        }
    }
}

extension LocalGateway {
    /// `{"reason":"…"}` as APNs puts it in GOAWAY's debug data; nil when turned off.
    func goAwayDebugData(reason: String, allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard configuration.dynamics.goAwayReasons,
            let json = try? JSONSerialization.data(withJSONObject: ["reason": reason])
        else { return nil }
        return allocator.buffer(bytes: json)
    }
}
