import Foundation
import PushCore

/// The decisions of a bulk run, with no I/O: which notification goes on which connection and
/// when, what a stream's end means, what is sent again, what is final, and when the run ends.
///
/// A driver feeds it events (token lines, a connection ready or lost, a stream opened, answered,
/// reset or closed, a GOAWAY, the clock) and carries out the ``Action``s it returns, in order.
/// Everything here is testable without a socket, in the manner of swift-nio-http2's
/// connection-management state machines.
///
/// The rules it keeps:
/// - In flight per connection: at most the server's current SETTINGS_MAX_CONCURRENT_STREAMS.
/// - Nothing is sent before its journal entry is written: ``fill(now:)`` ends with
///   ``Action/journal(_:)`` and the sends wait for ``journalWritten(ok:now:)``.
/// - An answer is final. A RST_STREAM after an answer (RFC 9113 §8.1: nginx ends every answered
///   stream with NO_ERROR) is a normal completion and counts toward nothing.
/// - "Not processed" (REFUSED_STREAM, above a GOAWAY's last-stream-id, never opened) is sent
///   again and is not uncertain.
/// - An answer lost (a timeout, a reset, its connection) may have been delivered: marked
///   uncertain, and sent again with the same `apns-id` only when the run's policy says so
///   (``Configuration/resendLostAnswers``; a push type that acts twice is not by default).
/// - Lost answers halve the streams in flight, once per round; answers grow them back by one
///   per window's worth; a request reaching the deadline doubles it (up to a cap) rather than
///   being copied; two connections in a row closed before answering anything stop the run
///   (``Backoff``).
/// - At or below a GOAWAY's last-stream-id without an answer: processed, not sent again.
/// - 429, 500 and 503 are retried with back-off and full jitter, never sooner than Retry-After.
/// - ``Configuration/maxAttempts`` caps every send of a notification, refusals included.
/// - A request unanswered by the deadline (``Configuration/requestTimeout``, grown) is cancelled.
/// - When this side closes a connection it sends GOAWAY and waits, at most
///   ``Configuration/drainTimeout``, for the answers in flight.
/// - A rejection that every notification would get (the credential, the topic, the payload)
///   stops the run, and the lines it stopped are not final: a resumed run sends them.
/// - Except a first `InvalidProviderToken` to a token that can be replaced
///   (``Configuration/refreshesProviderToken``): new sends wait for another token
///   (``Action/refreshProviderToken``) and the refused lines are sent again, not uncertain.
public struct BulkEngine {
    public typealias ConnectionID = Int
    public typealias SendID = Int

    /// One request of a notification on a connection.
    public struct Send: Sendable, Equatable {
        public var id: SendID
        public var connection: ConnectionID
        public var line: Int
        /// The device token, lower-case hex.
        public var token: String
        /// The notification's `apns-id`, the same on every send of it.
        public var apnsID: String
        /// 1 for the first send.
        public var attempt: Int
    }

    /// How the server reset a stream.
    public enum ResetCode: Sendable, Equatable {
        case noError
        case refusedStream
        case other(String)
    }

    public enum Action: Sendable, Equatable {
        /// Open a connection for ``ConnectionID`` after `delay` seconds; report with
        /// ``connected(_:maxConcurrentStreams:now:)`` or ``connectFailed(_:message:retryable:now:)``.
        case connect(ConnectionID, delay: Double)
        /// Write these sends to the journal and make them reach the kernel, then call
        /// ``journalWritten(ok:now:)``.
        case journal([Send])
        /// Write the request on its connection.
        case open(Send)
        /// Write this final result.
        case record(BulkResult)
        /// The journal's entry for this line is void: it was not processed.
        case clearJournal(line: Int)
        /// Reset this stream (CANCEL): its answer is no longer awaited.
        case cancel(SendID, ConnectionID)
        /// Tell the server this side is going away (GOAWAY), then wait for answers in flight.
        case goAway(ConnectionID)
        /// Close the connection now.
        case close(ConnectionID)
        /// Stop reading token lines.
        case stopReading
        /// The run is over; every line read is accounted for in the summary.
        case finished(BulkSummary)
        /// No connection could ever be made: the run fails with the last connecting error.
        case abort(message: String)
        /// APNs refused the provider token (`InvalidProviderToken`): drop it, tell its source,
        /// get another, then call ``providerTokenRefreshed(failure:now:)``. Nothing new is sent
        /// until then.
        case refreshProviderToken
    }

    enum ConnectionState: Equatable {
        case connecting
        case ready
        /// The server sent GOAWAY: streams above `lastStreamID` were not processed.
        case goingAway(lastStreamID: Int)
        /// This side sent GOAWAY and waits until `deadline` for the answers in flight.
        case draining(deadline: Double)
        /// This side asked the driver to close it and waits for ``connectionClosed(_:now:)``;
        /// a GOAWAY's `lastStreamID`, when one came, still decides what was in flight.
        case closing(lastStreamID: Int?)
        case closed
    }

    /// Where the run as a whole is. Each case carries what only it needs, so no flag can
    /// contradict another (a deadline without a stop, a stop after the end).
    enum Phase: Equatable {
        /// Taking token lines and sending them.
        case sending
        /// No new lines: the answers in flight are awaited until `drainDeadline` (nil once it
        /// passed, or after a second stop, and the connections were told to close).
        case stopping(drainDeadline: Double?)
        /// Every line read is accounted for in `summary`.
        case finished(BulkSummary)
    }

    /// A value: copying the engine copies its connections, so two copies never share one.
    struct Connection {
        let id: ConnectionID
        let slot: Int
        var state = ConnectionState.connecting
        var limit: Int?
        var goAwayCounted = false
        /// The server answered at least one of its streams.
        var answeredAny = false
        var inFlight: [SendID: InFlight] = [:]
        var resetWindowStart: Double = 0
        var resetsInWindow = 0
        init(id: ConnectionID, slot: Int) {
            self.id = id
            self.slot = slot
        }
        var lastStreamID: Int? {
            switch state {
            case .goingAway(let last): return last
            case .closing(let last): return last
            default: return nil
            }
        }
        var takesNewStreams: Bool { state == .ready }
    }

    /// One notification (a token line) while it is not final. It lives in exactly one place at
    /// a time: the read-ahead, a retry's wait, or a connection's streams in flight.
    struct Item {
        let line: Int
        let token: String
        let apnsID: String
        var attempts: Int
        var uncertain: Bool
        var uncertainBecause: BulkResultCode?
        /// A committed journal entry says this was sent and nothing has cleared it: left
        /// unfinished, a resumed run reports it as `outcome_unknown` rather than send it.
        var inJournal = false
        init(line: Int, token: String, apnsID: String, attempts: Int = 0, uncertain: Bool = false) {
            self.line = line
            self.token = token
            self.apnsID = apnsID
            self.attempts = attempts
            self.uncertain = uncertain
        }
    }

    struct InFlight {
        var item: Item
        let sentAt: Double
        /// The provider token it was sent with: ``BulkEngine/tokenGeneration`` at the time.
        var tokenGeneration = 0
        var streamID: Int?
        /// The stream ended with neither an answer nor a reset: what it means depends on a
        /// GOAWAY that may come next, or on the connection's end.
        var closedUnanswered = false
    }

    struct Slot {
        var connection: ConnectionID?
        var failures = 0
    }

    public let configuration: Configuration
    var random: SplitMix64
    var ids: UUIDSource

    var phase = Phase.sending
    var connections: [ConnectionID: Connection] = [:]
    var slots: [Slot]
    var nextConnectionID = 1
    var nextSendID = 1
    var sendConnection: [SendID: ConnectionID] = [:]
    var lines: [TokenEntry] = []
    var lineIndex = 0
    var ready: [Item] = []
    var readyIndex = 0
    var retries: [(due: Double, item: Item)] = []
    /// Sends made by the last ``fill(now:)`` whose journal is not yet written; their items are
    /// in their connections' streams in flight.
    var pendingBatch: [Send] = []
    /// How many times the provider token was dropped for a new one; sends made before the last
    /// drop carry an older number.
    var tokenGeneration = 0
    var providerToken = ProviderTokenState.inUse
    var feedFinished = false
    var everConnected = false
    var lastConnectError = ""
    var started: Double?
    var backoff: Backoff
    public internal(set) var summary = BulkSummary()
    public internal(set) var progress = BulkProgress()

    /// `seed` draws the back-off jitter and the notifications' `apns-id`s: two engines with the
    /// same seed fed the same events make the same decisions (tests give one, for repeatable
    /// runs). Without one, both come from the system's generator, each seeded on its own.
    public init(configuration: Configuration, seed: UInt64? = nil) {
        self.configuration = configuration
        var system = SystemRandomNumberGenerator()
        self.random = SplitMix64(seed: seed ?? system.next())
        self.ids = UUIDSource(seed: seed.map { $0 ^ 0xA5A5_5A5A_C3C3_3C3C } ?? system.next())
        slots = Array(repeating: Slot(), count: max(1, configuration.connections))
        backoff = Backoff(configuration: configuration)
    }

    /// True once the run stopped taking lines, whether asked to or at its end.
    var stopping: Bool { phase != .sending }

    /// True once ``Action/finished(_:)`` (or ``Action/abort(message:)``) was returned.
    public var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    // MARK: Starting and input

    /// Opens the connections.
    public mutating func start(now: Double) -> [Action] {
        started = now
        var actions: [Action] = []
        for slot in slots.indices { connect(slot: slot, delay: 0, into: &actions) }
        return actions
    }

    /// True while the engine wants more token lines.
    public var wantsTokens: Bool {
        !stopping && !feedFinished && lines.count - lineIndex < configuration.readAhead
    }

    /// Token lines in file order; `finished` once the input has no more.
    public mutating func tokens(_ entries: [TokenEntry], finished: Bool, now: Double) -> [Action] {
        if lineIndex > 0 && lineIndex >= lines.count / 2 {
            lines.removeFirst(lineIndex)
            lineIndex = 0
        }
        lines += entries
        if finished { feedFinished = true }
        var actions: [Action] = []
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// The token input ended with a read error. The lines read before it are still sent; the
    /// run ends as stopped, since the lines after it were never read (a resume reads them).
    public mutating func inputFailed(_ message: String) {
        guard !isFinished, summary.stoppedBy == nil else { return }
        summary.stoppedBy = .inputFailed
        summary.stopMessage = "The tokens could not all be read: \(message)."
        summary.stopHint =
            "Give a file (or standard input) of device tokens, one per line; the lines already read have their results."
    }

    // MARK: Connections

    public mutating func connected(_ id: ConnectionID, maxConcurrentStreams: Int?, now: Double) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        var actions: [Action] = []
        slots[connection.slot].failures = 0
        everConnected = true
        progress.connected = true
        summary.connections += 1
        connections[id]?.limit = maxConcurrentStreams
        if stopping {
            connections[id]?.state = .closed
            actions.append(.close(id))
            checkFinished(now: now, into: &actions)
        } else {
            connections[id]?.state = .ready
        }
        return actions
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS changed (nil: no limit).
    public mutating func settings(_ id: ConnectionID, maxConcurrentStreams: Int?) {
        connections[id]?.limit = maxConcurrentStreams
    }

    public mutating func connectFailed(_ id: ConnectionID, message: String, retryable: Bool, now: Double) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        connections[id] = nil
        lastConnectError = message
        let slot = connection.slot
        slots[slot].connection = nil
        slots[slot].failures += 1
        var actions: [Action] = []
        if retryable && slots[slot].failures < configuration.reconnectLimit && !stopping {
            connect(slot: slot, delay: backoff(attempt: slots[slot].failures), into: &actions)
            return actions
        }
        let alive = connections.values.contains { $0.state != .closed }
        if !alive {
            if !everConnected {
                phase = .finished(summary)
                actions.append(.stopReading)
                actions.append(.abort(message: message))
                return actions
            }
            stop(
                .connectionFailed,
                message: "The gateway cannot be reached any more: \(message)",
                hint: nil,
                now: now,
                into: &actions
            )
        }
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// The server sent GOAWAY: no new streams on this connection; streams above `lastStreamID`
    /// were not processed.
    /// `reason` is what the server said in GOAWAY's debug data (APNs: `Shutdown`, `IdleTimeout`),
    /// or the HTTP/2 error code when it said nothing; the summary counts them.
    public mutating func goAway(_ id: ConnectionID, lastStreamID: Int, reason: String? = nil, now: Double) -> [Action] {
        guard let connection = connections[id], connection.state != .closed else { return [] }
        if let reason, !connection.goAwayCounted {
            connections[id]?.goAwayCounted = true
            summary.goAways[reason, default: 0] += 1
        }
        var actions: [Action] = []
        if case .closing = connection.state {
            connections[id]?.state = .closing(lastStreamID: lastStreamID)
        } else {
            connections[id]?.state = .goingAway(lastStreamID: lastStreamID)
        }
        replace(connection, into: &actions)
        for (sendID, flight) in connection.inFlight.sorted(by: { $0.key < $1.key }) {
            guard let stream = flight.streamID, stream <= lastStreamID else {
                finishStream(sendID, on: id)
                notProcessed(flight.item, now: now, into: &actions)
                continue
            }
            if flight.closedUnanswered {
                finishStream(sendID, on: id)
                unansweredAfterGoAway(flight.item, into: &actions)
            }
        }
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// The connection is gone. What was in flight is decided by the GOAWAY, if one came.
    public mutating func connectionClosed(_ id: ConnectionID, now: Double) -> [Action] {
        guard let connection = connections[id], connection.state != .closed else { return [] }
        let lastStreamID = connection.lastStreamID
        connections[id] = nil
        var actions: [Action] = []
        if lastStreamID == nil { closedWhileSending(connection, now: now, into: &actions) }
        replace(connection, into: &actions)
        for (sendID, flight) in connection.inFlight.sorted(by: { $0.key < $1.key }) {
            sendConnection[sendID] = nil
            switch (flight.streamID, lastStreamID) {
            case (nil, _):
                notProcessed(flight.item, now: now, into: &actions)
            case (let stream?, let last?):
                if stream > last {
                    notProcessed(flight.item, now: now, into: &actions)
                } else {
                    unansweredAfterGoAway(flight.item, into: &actions)
                }
            case (_?, nil):
                lost(
                    flight.item,
                    sendID: sendID,
                    serverLimit: connection.limit,
                    code: .connectionClosed,
                    message: "The connection closed before the answer arrived.",
                    now: now,
                    into: &actions
                )
            }
        }
        checkFinished(now: now, into: &actions)
        return actions
    }

}
