import CredentialFormats
import NIOCore
import NIOHTTP2

/// A connection's lifecycle and bookkeeping, as a value in the manner of swift-nio-http2's state
/// machines: each event changes it and returns what the handler must do (the frames to write,
/// the closes to schedule). ``GatewayStreams`` owns it, on the connection's event loop, and
/// does what it says; nothing here touches a channel.
struct GatewayConnectionState {
    /// Where the connection is in its life. What every live state shares (limits, identity,
    /// counts) is kept beside it: a token accepted or a SETTINGS acknowledged while draining
    /// still counts.
    enum Lifecycle: Equatable {
        /// Serving streams.
        case open
        /// GOAWAY NO_ERROR decided, naming the highest stream processed then. `unsent` holds its
        /// reason while the frame waits for the end of a batch of reads. Processed streams are
        /// still answered, streams above the last one refused; once every processed stream has
        /// its answer, lingering.
        case draining(lastStreamID: HTTP2StreamID, unsent: String?)
        /// Drained: the close is scheduled a moment later (see ``GatewayStreams``). Requests at
        /// or below the last stream that were still arriving are answered meanwhile.
        case lingering(lastStreamID: HTTP2StreamID)
        /// A client over a flood budget or the bound on buffered requests: GOAWAY
        /// ENHANCE_YOUR_CALM is written, nothing more is read, and the close is scheduled.
        case calmed
        /// Cut by the drop fault: nothing more is processed, answered or said.
        case cut
        /// The channel is inactive.
        case closed
    }

    let rules: Rules
    private(set) var lifecycle: Lifecycle = .open
    private(set) var identity: ClientIdentity
    private(set) var limits: StreamLimits
    /// The last answer was a rejection (4xx): one stream only until one is accepted.
    private(set) var afterRejection = false
    private(set) var limitChanged = false

    var openStreams = 0
    private(set) var streamsSeen = 0
    private(set) var answered = 0
    private(set) var accepted = 0
    /// The highest stream processed (validated and decided) so far.
    private(set) var highestProcessed: HTTP2StreamID = .rootStream
    /// Streams processed whose answer is not yet written (added latency).
    private(set) var awaitingAnswer = 0
    /// Open streams whose request is not complete yet: a GOAWAY refuses those above its
    /// last-stream-id before it goes out.
    private(set) var unprocessed: Set<HTTP2StreamID> = []

    /// PING, SETTINGS and PRIORITY frames the client starts (not acknowledgements).
    private var controlFrames = FloodBudget(
        limit: ConnectionBounds.maxControlFramesPerWindow,
        window: ConnectionBounds.floodWindow
    )
    /// Streams the client reset before their answer.
    private var earlyResets = FloodBudget(
        limit: ConnectionBounds.maxEarlyResetsPerWindow,
        window: ConnectionBounds.floodWindow
    )
    /// Streams refused above the advertised limit since the client last acknowledged SETTINGS.
    private(set) var refusedSinceAcknowledgement = 0
    /// The client has acknowledged a SETTINGS of ours at least once.
    private(set) var everAcknowledged = false

    /// A connection whose TLS handshake is done: `identity` is how the client authenticated.
    init(identity: ClientIdentity, rules: Rules) {
        self.identity = identity
        self.rules = rules
        let configured = rules.maxConcurrentStreams
        limits = StreamLimits(start: identity.isAwaitingToken ? 1 : configured, configured: configured)
    }

    /// The limit of the connection's first SETTINGS.
    var initialLimit: Int { limits.advertised }

    /// Nothing more is read: the connection was given up on.
    var isCalmed: Bool { lifecycle == .calmed }

    /// The last stream a GOAWAY of ours named (NO_ERROR), once decided.
    var lastStreamID: HTTP2StreamID? {
        switch lifecycle {
        case .draining(let last, _), .lingering(let last): last
        case .open, .calmed, .cut, .closed: nil
        }
    }

    /// What APNs would advertise now: one stream while a token is awaited or after a
    /// rejection, else the configured limit.
    var desiredLimit: Int { identity.isAwaitingToken || afterRejection ? 1 : limits.configured }

    // MARK: Going away

    /// GOAWAY NO_ERROR naming the highest stream processed (the gateway stopping, the idle
    /// timeout, the goaway fault). `deferred`: decided while a batch of reads is being served;
    /// the last stream is fixed now, the streams of the batch above it are refused as they
    /// come, and the frame goes out when the batch ends (``readBatchEnded(closedStreams:)``).
    /// Once the GOAWAY is out swift-nio-http2 drops the streams the client opened in the same
    /// batch silently; with a stream channel each they were all opened before any was answered,
    /// and each was refused on its own.
    mutating func goAway(reason: String, deferred: Bool) -> OnGoAway {
        guard lifecycle == .open else { return .none }
        lifecycle = .draining(lastStreamID: highestProcessed, unsent: reason)
        guard !deferred, let frame = sendDueGoAway() else { return .deferred }
        return .send(frame)
    }

    /// The gateway stops: GOAWAY `Shutdown`.
    mutating func shutdown() -> OnGoAway { goAway(reason: "Shutdown", deferred: false) }

    /// Nothing read for the idle timeout: GOAWAY `IdleTimeout`, unless answers are awaited (a
    /// connection waiting for answers is not idle: the client has nothing to say). A request
    /// whose rest has not come for that long does not keep the connection: it is refused,
    /// unprocessed, with the GOAWAY.
    mutating func idleTimedOut() -> OnGoAway {
        guard awaitingAnswer == 0 else { return .none }
        return goAway(reason: "IdleTimeout", deferred: false)
    }

    /// A batch of reads ended, with `closedStreams` streams closed during it: they stop counting
    /// as open now, and a GOAWAY decided during the batch goes out.
    mutating func readBatchEnded(closedStreams: Int) -> GoAway? {
        openStreams -= closedStreams
        return sendDueGoAway()
    }

    private mutating func sendDueGoAway() -> GoAway? {
        guard case .draining(let last, let reason?) = lifecycle else { return nil }
        lifecycle = .draining(lastStreamID: last, unsent: nil)
        let refused = unprocessed.filter { $0 > last }.sorted()
        unprocessed.subtract(refused)
        return GoAway(lastStreamID: last, reason: reason, refused: refused, thenClose: closeIfDrained())
    }

    /// After GOAWAY, the connection closes once every stream it processed has its answer. True
    /// when the close is due now.
    mutating func closeIfDrained() -> Bool {
        guard case .draining(let last, nil) = lifecycle, awaitingAnswer == 0 else { return false }
        lifecycle = .lingering(lastStreamID: last)
        return true
    }

    /// The client is over one of the flood budgets or the bound on buffered requests.
    mutating func calm() -> OnCalm {
        switch lifecycle {
        case .open, .draining, .lingering:
            lifecycle = .calmed
            return .sendGoAway(lastStreamID: highestProcessed)
        case .calmed, .cut, .closed:
            return .none
        }
    }

    /// A PING, SETTINGS or PRIORITY the client started, at `now` on the event loop's clock.
    mutating func controlFrameReceived(at now: NIODeadline) -> OnCalm {
        controlFrames.spend(at: now) ? calm() : .none
    }

    /// A stream reset by the client before its answer: the rapid-reset attack, when it is done
    /// thousands of times.
    mutating func earlyReset(at now: NIODeadline) -> OnCalm {
        earlyResets.spend(at: now) ? calm() : .none
    }

    /// The client acknowledged our oldest unacknowledged SETTINGS: its limit is now in force.
    mutating func settingsAcknowledged() {
        refusedSinceAcknowledgement = 0
        everAcknowledged = true
        limits.acknowledge()
    }

    /// The channel went inactive with `openStreams` streams still counted open.
    mutating func closed(openStreams left: Int) {
        openStreams -= left
        unprocessed.removeAll()
        lifecycle = .closed
    }

    // MARK: Streams

    /// A stream's first HEADERS, judged against `batchLimit`, the limit advertised when the
    /// batch of reads began.
    mutating func streamOpened(_ streamID: HTTP2StreamID, batchLimit: Int) -> OnStreamOpened {
        streamsSeen += 1
        openStreams += 1
        if let limit = rules.closeAfterStreams, streamsSeen > limit { return .closeConnection }
        if openStreams > batchLimit {
            // A client sees the lowered limit before the refusals it causes and acknowledges it:
            // it can be refused about as many streams as it had in flight, not thousands more.
            refusedSinceAcknowledgement += 1
            let bound = ConnectionBounds.maxRefusedBeforeAcknowledgement(
                rules.maxConcurrentStreams,
                everAcknowledged: everAcknowledged
            )
            return .refuse(calm: refusedSinceAcknowledgement > bound ? calm() : .none)
        }
        unprocessed.insert(streamID)
        return .read
    }

    /// swift-nio-http2 reported the stream closed. `countNow`: it stops counting as open now
    /// (not at the end of the batch of reads in progress).
    mutating func streamClosed(_ streamID: HTTP2StreamID, countNow: Bool) {
        if countNow { openStreams -= 1 }
        unprocessed.remove(streamID)
    }

    /// The stream's request is complete (or as complete as it will be, answering early).
    mutating func requestComplete(_ streamID: HTTP2StreamID) -> OnRequest {
        unprocessed.remove(streamID)
        switch lifecycle {
        case .cut, .calmed, .closed:
            return .ignore
        case .draining(let last, _), .lingering(let last):
            if streamID > last { return .refuse }
        case .open:
            break
        }
        highestProcessed = max(highestProcessed, streamID)
        awaitingAnswer += 1
        return .process
    }

    /// A processed stream's answer, with `status`, is about to be written. `inReadBatch`: a
    /// GOAWAY this answer causes waits for the batch's end.
    mutating func answering(status: Int, tokenAccepted: Bool, inReadBatch: Bool) -> OnAnswered {
        awaitingAnswer -= 1
        if status == 200 { accepted += 1 }
        if tokenAccepted { identity.tokenAccepted() }
        if rules.singleStreamAfterRejection {
            if (400..<500).contains(status) {
                afterRejection = true
            } else if status == 200 {
                afterRejection = false
            }
        }
        if let change = rules.changeMaxConcurrentStreams, !limitChanged, accepted >= change.afterAccepted {
            limitChanged = true
            limits.configure(change.to)
        }
        var settings: Int?
        switch lifecycle {
        case .open, .draining:
            if limits.advertise(desiredLimit) { settings = desiredLimit }
        case .lingering, .calmed, .cut, .closed:
            break
        }
        answered += 1
        var goAway = OnGoAway.none
        if let limit = rules.goAwayAfterStreams, answered >= limit {
            // As APNs: the last stream named is the highest one processed; those still being
            // answered (added latency) are answered before the connection closes.
            goAway = self.goAway(reason: rules.goAwayReason, deferred: inReadBatch)
        }
        return OnAnswered(settings: settings, goAway: goAway, close: closeIfDrained())
    }

    /// A processed stream's answer will not be written (its stream or the connection is gone).
    /// True when the close after GOAWAY is due now.
    mutating func answerAbandoned() -> Bool {
        awaitingAnswer -= 1
        return closeIfDrained()
    }

    /// The drop fault took this answer: the connection is cut before it goes out, and nothing
    /// more is processed on it.
    mutating func answerCut() {
        awaitingAnswer -= 1
        lifecycle = .cut
    }
}
