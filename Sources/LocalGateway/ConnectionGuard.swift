import NIOCore
import NIOHTTP2

/// The bounds that keep one hostile client from taking the gateway's memory. Every value is
/// documented, with its reason, in docs/gateway.md ("Bounds on what a client can make the
/// gateway hold").
enum ConnectionBounds {
    /// SETTINGS_MAX_HEADER_LIST_SIZE: APNs' requests carry a few hundred bytes of headers.
    static let maxHeaderListSize = 8_192
    /// SETTINGS_HEADER_TABLE_SIZE: HTTP/2's default; the HPACK table a client can fill.
    static let headerTableSize = 4_096
    /// CONTINUATION frames in a row: a header block this small never needs more.
    static let maxSequentialContinuationFrames = 5
    /// Control frames (PING and SETTINGS acknowledgements) the gateway holds for a client that
    /// does not read them.
    static let maxBufferedControlFrames = 1_000
    /// Headers and bodies of unfinished requests on one connection. A notification's payload
    /// is at most 5 KiB and a client sends its DATA right behind its HEADERS.
    static let maxBufferedRequestBytes = 1 << 20
    /// PING and SETTINGS frames a client may send within ``floodWindow``: clients send SETTINGS
    /// once or twice and PING for keep-alive.
    static let maxControlFramesPerWindow = 1_000
    /// Streams a client may reset before their answer within ``floodWindow`` (rapid reset).
    static let maxEarlyResetsPerWindow = 1_000
    static let floodWindow = TimeAmount.seconds(10)
    /// Streams refused above the advertised limit before the client acknowledges a SETTINGS:
    /// a client that reads what it is sent can have no more than its streams in flight
    /// refused; one that opens and resets streams without reading anything is refused without end.
    /// Before its first acknowledgement a client has had one round trip to send streams, and
    /// clients assume 100 until they read the server's limit.
    static func maxRefusedBeforeAcknowledgement(_ configuredLimit: Int, everAcknowledged: Bool) -> Int {
        everAcknowledged ? max(100, configuredLimit) + 100 : 200
    }
    /// After a GOAWAY for a connection error: the longest the gateway waits for it to leave.
    static let goAwayFlushDeadline = TimeAmount.seconds(1)
    /// A connection whose answers do not drain (the client reads nothing) for this long is closed.
    /// Reading stops at once, which bounds the memory; the close only frees the connection, so
    /// it waits as long as a slow client on a loaded machine might (floods are closed sooner by
    /// their budgets).
    static let unwritableDeadline = TimeAmount.seconds(30)

    static func apply(
        _ settings: inout NIOHTTP2Handler.ConnectionConfiguration,
        _ stream: inout NIOHTTP2Handler.StreamConfiguration
    ) {
        settings.initialSettings += [
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
            HTTP2Setting(parameter: .headerTableSize, value: headerTableSize),
        ]
        settings.maximumSequentialContinuationFrames = maxSequentialContinuationFrames
        settings.maximumBufferedControlFrames = maxBufferedControlFrames
        settings.maximumRecentlyResetStreams = 1_024
        // curl resets every stream it has finished with (RST_STREAM after the answer). NIO's
        // default flood limit, 200 resets in 30 s, closed such a connection with GOAWAY
        // ENHANCE_YOUR_CALM after about 200 notifications, which APNs does not do. Resets of
        // streams not yet answered (the rapid-reset attack) have their own, tighter budget in
        // GatewayStreams; the window's timestamps are preallocated, so it is kept short.
        stream.streamResetFrameRateLimit.maximumCount = 50_000
        stream.streamResetFrameRateLimit.windowLength = .seconds(1)
        // Every SETTINGS the stream-limit dynamics send comes back acknowledged: NIO's default,
        // 200 control frames in 30 s, closed a bulk run's connection after some hundred
        // rejections. PINGs and SETTINGS the client starts itself have their own budget
        // (FloodBudget, in the connection observer).
        settings.controlFrameRateLimit.maximumCount = 50_000
        settings.controlFrameRateLimit.windowLength = .seconds(1)
    }
}

/// Counts events within a window; true once the budget is exceeded.
struct FloodBudget {
    let limit: Int
    let window: TimeAmount
    private var count = 0
    private var windowStart = NIODeadline.uptimeNanoseconds(0)

    init(limit: Int, window: TimeAmount) {
        self.limit = limit
        self.window = window
    }

    /// `now`: the connection's event loop's clock, so that an embedded loop can drive the window.
    mutating func spend(at now: NIODeadline) -> Bool {
        if now - windowStart > window {
            windowStart = now
            count = 0
        }
        count += 1
        return count > limit
    }
}

/// Sits between TLS and swift-nio-http2 and drops a connection the gateway has given up on.
///
/// swift-nio-http2 answers a connection error (a malformed frame, a flood its heuristics
/// catch, too many CONTINUATION frames, a header block too large) with GOAWAY, but leaves the
/// connection open; what the client sends afterwards still reaches its frame decoder, which
/// keeps it. This handler learns of every GOAWAY the handler writes (as its frame delegate);
/// after one with an error code it passes nothing more inward and closes the connection once
/// the GOAWAY has been written, or after ``ConnectionBounds/goAwayFlushDeadline``.
///
/// It also stops reading while the connection cannot take more answers (a client that never
/// reads its PING or SETTINGS acknowledgements), and closes it if that lasts beyond
/// ``ConnectionBounds/unwritableDeadline``.
final class ConnectionGuard: ChannelDuplexHandler, NIOHTTP2FrameDelegate {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var context: ChannelHandlerContext?
    /// A GOAWAY with an error code is about to be written: close once it is.
    private var closeAfterNextWrite = false
    private(set) var gaveUp = false
    private var unwritableTimer: Scheduled<Void>?
    private let onGiveUp: () -> Void

    init(onGiveUp: @escaping () -> Void) { self.onGiveUp = onGiveUp }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        unwritableTimer?.cancel()
        self.context = nil
    }

    /// Called by swift-nio-http2 just before a frame's bytes are written, on the event loop.
    func wroteFrame(_ frame: HTTP2Frame) {
        guard case .goAway(_, let code, _) = frame.payload, code != .noError, !gaveUp else { return }
        giveUp()
        closeAfterNextWrite = true
    }

    private func giveUp() {
        guard !gaveUp, let context else { return }
        gaveUp = true
        onGiveUp()
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        let channel = context.channel
        context.eventLoop.assumeIsolated().scheduleTask(in: ConnectionBounds.goAwayFlushDeadline) {
            channel.close(promise: nil)
        }
        // The GOAWAY may be waiting for the end of a batch of reads: send it on its way.
        context.eventLoop.assumeIsolated().execute { [weak self] in self?.context?.flush() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !gaveUp else { return }  // nothing more for a connection already given up on
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard closeAfterNextWrite else {
            context.write(data, promise: promise)
            return
        }
        closeAfterNextWrite = false
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.cascade(to: promise)
        let channel = context.channel
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        context.write(data, promise: written)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            unwritableTimer?.cancel()
            unwritableTimer = nil
            if !gaveUp { context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in } }
        } else {
            // Reading more would only make more answers to hold: wait until the client reads.
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
            if unwritableTimer == nil {
                let channel = context.channel
                unwritableTimer = context.eventLoop.assumeIsolated().scheduleTask(
                    in: ConnectionBounds.unwritableDeadline
                ) { [weak self] in
                    self?.onGiveUp()
                    channel.close(promise: nil)
                }
            }
        }
        context.fireChannelWritabilityChanged()
    }
}
