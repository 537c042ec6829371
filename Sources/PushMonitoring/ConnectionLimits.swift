import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The bounds of the exporter's HTTP server: how long a request may take to arrive, how long
/// a kept-alive connection may sit idle, and how many connections it holds at once.
public struct ExporterLimits: Sendable {
    /// Seconds from a request's first byte (or a TLS handshake's) to its last: a client that
    /// sends half a request is closed after this.
    public var requestTimeout: Double
    /// Seconds a connection may stay open with no request under way: after it connects, and
    /// between the answer to one request and the first byte of the next.
    public var idleTimeout: Double
    /// Connections held at once. At the cap a new connection closes the oldest one that is not
    /// being answered; when every one is being answered, the new one is closed.
    public var maxConnections: Int

    public static let defaultRequestTimeout: Double = 10
    public static let defaultIdleTimeout: Double = 60
    public static let defaultMaxConnections = 256

    public init(
        requestTimeout: Double = ExporterLimits.defaultRequestTimeout,
        idleTimeout: Double = ExporterLimits.defaultIdleTimeout,
        maxConnections: Int = ExporterLimits.defaultMaxConnections
    ) {
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = max(1, maxConnections)
    }
}

/// The open connections, so that the cap holds: a new connection at the cap takes the place of
/// the oldest one that is idle or still sending its request.
final class ConnectionRegistry: Sendable {
    private struct Slot {
        let channel: any Channel
        let order: UInt64
        var answering: Bool
    }

    private struct State {
        var slots: [ObjectIdentifier: Slot] = [:]
        var next: UInt64 = 0
    }

    let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { state.withLockedValue { $0.slots.count } }

    /// True when `channel` may stay; false when every held connection is being answered.
    func admit(_ channel: any Channel) -> Bool {
        let (admitted, evicted) = state.withLockedValue { state -> (Bool, (any Channel)?) in
            var evicted: (any Channel)?
            if state.slots.count >= capacity {
                guard
                    let oldest = state.slots.filter({ !$0.value.answering })
                        .min(by: { $0.value.order < $1.value.order })
                else { return (false, nil) }
                evicted = oldest.value.channel
                state.slots[oldest.key] = nil
            }
            state.next += 1
            state.slots[ObjectIdentifier(channel)] = Slot(channel: channel, order: state.next, answering: false)
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        return admitted
    }

    func setAnswering(_ channel: any Channel, _ answering: Bool) {
        state.withLockedValue { $0.slots[ObjectIdentifier(channel)]?.answering = answering }
    }

    func remove(_ channel: any Channel) {
        state.withLockedValue { $0.slots[ObjectIdentifier(channel)] = nil }
    }
}

/// Where a connection is between requests, and the one timer that closes it if it stays there
/// too long. Used on the connection's event loop only.
final class ConnectionClock {
    enum Phase { case idle, receiving, answering }

    let limits: ExporterLimits
    let registry: ConnectionRegistry
    private(set) var phase = Phase.idle
    private var timer: Scheduled<Void>?

    init(limits: ExporterLimits, registry: ConnectionRegistry) {
        self.limits = limits
        self.registry = registry
    }

    func enter(_ phase: Phase, channel: any Channel) {
        self.phase = phase
        timer?.cancel()
        timer = nil
        registry.setAnswering(channel, phase == .answering)
        let seconds: Double
        switch phase {
        case .idle: seconds = limits.idleTimeout
        case .receiving: seconds = limits.requestTimeout
        case .answering: return
        }
        timer = channel.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
            channel.close(promise: nil)
        }
    }

    func stop() {
        timer?.cancel()
        timer = nil
    }
}

/// First in the pipeline (before TLS): the first bytes of a request, or of a TLS handshake,
/// start the request timeout.
final class RequestStartHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let clock: ConnectionClock

    init(clock: ConnectionClock) { self.clock = clock }

    func handlerAdded(context: ChannelHandlerContext) {
        clock.enter(.idle, channel: context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if clock.phase == .idle { clock.enter(.receiving, channel: context.channel) }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        clock.stop()
        clock.registry.remove(context.channel)
        context.fireChannelInactive()
    }
}

/// After the HTTP codec: a whole request stops the timer while it is answered; the answer's
/// end starts the idle timeout.
final class RequestPhaseHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let clock: ConnectionClock

    init(clock: ConnectionClock) { self.clock = clock }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { clock.enter(.answering, channel: context.channel) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        let clock = self.clock
        let channel = context.channel
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { _ in
            if clock.phase == .answering { clock.enter(.idle, channel: channel) }
        }
        written.futureResult.cascade(to: promise)
        context.write(data, promise: written)
    }
}
