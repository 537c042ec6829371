import Foundation
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS
import PushCredentials

/// Per-connection bookkeeping, touched only on the connection's event loop.
final class GatewayConnectionState {
    let number: Int
    let channel: any Channel
    /// The MAX_CONCURRENT_STREAMS last advertised (sent, perhaps not yet acknowledged).
    var advertisedLimit: Int
    /// The limit the client has acknowledged: the one in force (swift-nio-http2 enforces it).
    var acknowledgedLimit: Int
    /// Limits sent and not yet acknowledged, oldest first (SETTINGS are acknowledged in order).
    var pendingLimits: [Int]
    /// The limit to return to: the configured one, or the one the change fault set.
    var configuredLimit: Int
    /// Token authentication has not yet been shown on this connection: one stream only.
    var awaitingToken = false
    /// The last answer was a rejection (4xx): one stream only until one is accepted.
    var afterRejection = false
    var openStreams = 0
    var streamsSeen = 0
    var answered = 0
    var accepted = 0
    var limitChanged = false
    var goingAway = false
    var closing = false
    /// Cut by the drop fault: nothing more is processed.
    var dropped = false
    /// The last-stream-id of the GOAWAY sent, once sent.
    var lastStreamID: HTTP2StreamID?
    /// The highest stream processed (validated and decided) so far.
    var highestProcessed: HTTP2StreamID = .rootStream
    /// Streams processed whose answer is not yet written (added latency).
    var awaitingAnswer = 0
    /// Open streams whose request is not complete yet: a GOAWAY refuses those above its
    /// last-stream-id before it goes out.
    var unprocessed: Set<HTTP2StreamID> = []
    /// The connection's streams, which refuse those.
    weak var streams: GatewayStreams?
    var peerCertificate: PushCertificate??

    init(number: Int, channel: any Channel, configuredLimit: Int) {
        self.number = number
        self.channel = channel
        self.configuredLimit = configuredLimit
        advertisedLimit = configuredLimit
        acknowledgedLimit = configuredLimit
        pendingLimits = []
    }

    /// The client's verified certificate, parsed once.
    func clientCertificate() -> PushCertificate? {
        if let peerCertificate { return peerCertificate }
        let parsed: PushCertificate? = {
            guard let handler = try? channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self),
                let certificate = handler.peerCertificate,
                let der = try? certificate.toDERBytes()
            else { return nil }
            return try? PushCertificate(der: der)
        }()
        peerCertificate = .some(parsed)
        return parsed
    }

    // MARK: The advertised stream limit

    /// What APNs would advertise now: one stream while a token is awaited or after a
    /// rejection, else the configured limit.
    var desiredLimit: Int { awaitingToken || afterRejection ? 1 : configuredLimit }

    /// The limit of the connection's first SETTINGS, also taken as acknowledged until the
    /// client's acknowledgement arrives (which it sends before its first request).
    func startLimit() -> Int {
        let limit = desiredLimit
        advertisedLimit = limit
        acknowledgedLimit = limit
        pendingLimits = [limit]
        return limit
    }

    /// Sends SETTINGS when the limit APNs would advertise has changed. On the connection, so
    /// that it leaves before the answer being written (the client has the new limit first).
    func advertiseIfChanged(_ gateway: LocalGateway) {
        let limit = desiredLimit
        guard limit != advertisedLimit, !closing else { return }
        advertisedLimit = limit
        pendingLimits.append(limit)
        gateway.updateStatistics { $0.settingsChanges += 1 }
        let settings = HTTP2Frame(
            streamID: .rootStream,
            payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: limit)]))
        )
        channel.writeAndFlush(settings, promise: nil)
    }

    /// The client acknowledged our oldest unacknowledged SETTINGS: its limit is now in force.
    func settingsAcknowledged() {
        refusedSinceAcknowledgement = 0
        everAcknowledged = true
        guard !pendingLimits.isEmpty else { return }
        acknowledgedLimit = pendingLimits.removeFirst()
    }

    // MARK: Going away

    /// GOAWAY (NO_ERROR) naming the highest stream processed, with APNs' JSON reason unless
    /// turned off; streams above it whose request is still arriving are refused first. The
    /// connection closes once every processed stream has its answer.
    ///
    /// `deferred`: decided while a batch of reads is being served; the last stream is fixed
    /// now, and the streams of the batch above it are refused as they come, but the frame goes
    /// out when the batch ends (``sendGoAway(gateway:)``). Requests are answered as they
    /// complete, and once the GOAWAY is out swift-nio-http2 drops the streams the client opened
    /// in the same batch silently; with a stream channel each they were all opened before any
    /// was answered, and each was refused on its own.
    func goAway(reason: String, gateway: LocalGateway, deferred: Bool = false) {
        guard !goingAway, !closing else { return }
        goingAway = true
        lastStreamID = highestProcessed
        goAwayReason = reason
        gateway.updateStatistics { $0.goAwaysSent += 1 }
        if !deferred { sendGoAway(gateway: gateway) }
    }

    /// The reason of a GOAWAY decided but not yet sent.
    private(set) var goAwayReason: String?
    var goAwayDue: Bool { goingAway && goAwayReason != nil }

    /// Sends the GOAWAY ``goAway(reason:gateway:deferred:)`` decided.
    func sendGoAway(gateway: LocalGateway) {
        guard let reason = goAwayReason, let last = lastStreamID else { return }
        goAwayReason = nil
        // Each refused with its own RST_STREAM REFUSED_STREAM: once the GOAWAY is out,
        // swift-nio-http2 drops such streams silently, and the client would learn of them only
        // from the GOAWAY.
        let above = unprocessed.filter { $0 > last }
        for streamID in above.sorted() {
            gateway.updateStatistics { $0.refusedAfterGoAway += 1 }
            streams?.refuse(streamID)
        }
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(
                lastStreamID: last,
                errorCode: .noError,
                opaqueData: gateway.goAwayDebugData(reason: reason, allocator: channel.allocator)
            )
        )
        channel.writeAndFlush(frame, promise: nil)
        closeIfGoneAway()
    }

    /// PING, SETTINGS and PRIORITY frames the client starts (not acknowledgements).
    var controlFrames = FloodBudget(
        limit: ConnectionBounds.maxControlFramesPerWindow,
        window: ConnectionBounds.floodWindow
    )
    /// Streams refused above the advertised limit since the client last acknowledged SETTINGS.
    var refusedSinceAcknowledgement = 0
    /// The client has acknowledged a SETTINGS of ours at least once.
    var everAcknowledged = false
    /// Streams the client reset before their answer.
    var earlyResets = FloodBudget(limit: ConnectionBounds.maxEarlyResetsPerWindow, window: ConnectionBounds.floodWindow)

    /// A client over one of the flood budgets or the bound on buffered requests: GOAWAY
    /// ENHANCE_YOUR_CALM naming the highest stream processed. The connection guard closes the
    /// connection once it is written; the deadline covers a GOAWAY that cannot be written.
    private(set) var calmed = false

    func calm() {
        guard !calmed else { return }
        calmed = true
        closing = true
        goingAway = true
        let channel = self.channel
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: highestProcessed, errorCode: .enhanceYourCalm, opaqueData: nil)
        )
        channel.writeAndFlush(frame, promise: nil)
        channel.eventLoop.assumeIsolated().scheduleTask(in: ConnectionBounds.goAwayFlushDeadline) {
            channel.close(promise: nil)
        }
    }

    /// After GOAWAY, the connection closes once every stream it processed has its answer.
    func closeIfGoneAway() {
        guard goingAway, !goAwayDue, awaitingAnswer == 0, !closing else { return }
        closing = true
        let channel = self.channel
        // A lingering close, as nginx does: closing while the client is still sending makes the
        // kernel answer with a reset, and a reset can discard the GOAWAY still waiting to be read
        // on the client's side, which then cannot tell processed from unprocessed. A moment for
        // the GOAWAY to arrive and the client to stop (or close first) avoids that.
        channel.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
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

/// Sent through a connection's pipeline when the gateway stops: GOAWAY `Shutdown`.
struct GatewayShutdownEvent {}

/// Holds HTTP/2 back until the TLS handshake is done, so that the first SETTINGS can depend on
/// how the client authenticated (APNs starts a connection without a client certificate at one
/// stream). Then sets HTTP/2 up behind itself and leaves.
final class HTTP2Starter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let start: (any Channel) throws -> Void

    init(start: @escaping (any Channel) throws -> Void) {
        self.start = start
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls {
            do {
                try start(context.channel)
            } catch {
                context.close(promise: nil)
                return
            }
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        if event is GatewayShutdownEvent {
            // Not speaking HTTP/2 yet: nothing to say goodbye with.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
