import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import PushCredentials

/// Sends one notification to every token of a ``TokenFeed`` over one HTTP/2 connection (or a
/// few), as many streams at a time as the server allows, and writes exactly one final result
/// per token.
///
/// The rules it keeps:
/// - In flight per connection: at most the server's current SETTINGS_MAX_CONCURRENT_STREAMS,
///   read again before every stream, so a limit lowered to 1 and raised again is followed.
/// - 429, 500 and 503 are retried with exponential back-off and full jitter, never sooner than
///   `Retry-After`, up to ``Options/maxAttempts`` sends, with the same `apns-id`.
/// - A stream the server did not process (GOAWAY above its last-stream-id, REFUSED_STREAM, or
///   a stream that never opened) is sent again on a new connection and was not delivered.
/// - A stream whose answer was lost with its connection may have been delivered: it is sent
///   again (at least once) and its result says `uncertain`.
/// - Never sent again: anything the server answered other than 429/500/503.
///
/// Before a stream is written its line goes into the journal (``BulkOutput``), so a run killed
/// at any moment can be resumed without sending anything twice.
///
/// Everything runs on one event loop: connections, streams, the pump and the output.
public final class BulkSender: @unchecked Sendable {
    public struct Options: Sendable {
        public var connections = 1
        /// Sends per notification, the first included.
        public var maxAttempts = 5
        /// Back-off before retry n (n ≥ 1) is random in 0...min(cap, base·2ⁿ⁻¹).
        public var backoffBase: Double = 0.2
        public var backoffCap: Double = 30
        /// A `Retry-After` longer than this is cut to it.
        public var retryAfterCap: Double = 600
        /// After a stop, how long streams in flight may take to finish.
        public var drainTimeout: Double = 10
        /// Connecting attempts in a row that may fail before the run gives up.
        public var reconnectLimit = 6
        /// Streams in flight per connection never exceed this, whatever the server allows.
        public var maxInFlightPerConnection = 1_000
        /// Lines an earlier run sent without recording the answer: send them again (true) or
        /// report them as `outcome_unknown` (false, the default: nothing is delivered twice).
        public var resendUncertain = false
        public init() {}
    }

    /// Counts for a progress display.
    public struct Progress: Sendable {
        public var finished = 0
        public var accepted = 0
        public var rejected = 0
        public var failed = 0
        public var inFlight = 0
        public var requests = 0
        public var elapsed: Double = 0
        public var connected = false
    }

    /// Why a run ended before every line was done.
    public enum StopCause: String, Sendable, Codable {
        case interrupted
        case credentialRejected = "credential_rejected"
        case connectionFailed = "connection_failed"
        case outputFailed = "output_failed"
        case wrongTokenFile = "wrong_token_file"
    }

    public struct Summary: Sendable, Encodable {
        /// Final result lines written by this run.
        public var results = 0
        public var accepted = 0
        /// Rejections by reason (`BadDeviceToken`: 3); retryable answers that ran out of
        /// attempts count here too.
        public var rejected: [String: Int] = [:]
        /// Lines that needed more than one send.
        public var retried = 0
        /// Lines with no answer in the end (transport failures, unknown outcomes).
        public var failed = 0
        public var malformed = 0
        /// Lines whose result says `uncertain`.
        public var uncertain = 0
        /// Lines read but left without a result (the run stopped); `--resume` sends them.
        public var unfinished = 0
        /// Requests written, retries included.
        public var requests = 0
        public var connections = 0
        public var seconds: Double = 0
        /// Final results per second.
        public var rate: Double = 0
        public var stoppedBy: StopCause?
        public var stopMessage: String?
        public var stopHint: String?
        /// Resumed runs: lines skipped because an earlier run has their result.
        public var skipped = 0

        public var rejectedTotal: Int { rejected.values.reduce(0, +) }
    }

    final class Item: @unchecked Sendable {
        let line: Int
        let token: DeviceToken
        let hex: String
        let apnsID: UUID
        let apnsIDText: String
        var attempts: Int
        /// Sends the server said it did not process (they do not use up attempts).
        var refusals = 0
        var uncertain: Bool

        init(line: Int, token: DeviceToken, apnsID: UUID = UUID(), attempts: Int = 0, uncertain: Bool = false) {
            self.line = line
            self.token = token
            self.hex = token.hex
            self.apnsID = apnsID
            self.apnsIDText = TextEncoding.lowercaseUUID(apnsID)
            self.attempts = attempts
            self.uncertain = uncertain
        }

        var countedAttempts: Int { attempts - refusals }
    }

    final class Lane: @unchecked Sendable {
        let connection: GatewayConnection
        var multiplexer: NIOHTTP2Handler.StreamMultiplexer?
        var batching: BatchingHandler?
        var inFlight = 0
        /// When a stream of this connection last finished (or the first was sent).
        var lastProgress = DispatchTime.now()
        init(connection: GatewayConnection) { self.connection = connection }
    }

    final class Slot: @unchecked Sendable {
        var lane: Lane?
        var connecting = false
        var failures = 0
        var retired: [Lane] = []
    }

    public let configuration: GatewayConfiguration
    public let options: Options
    let loop: any EventLoop
    let feed: TokenFeed
    let output: BulkOutput
    let tokens: ProviderTokenCache?
    let baseHeaders: [(String, String)]
    let pseudoHeaders: (method: String, scheme: String, authority: String)
    let body: ByteBuffer

    // Loop-confined state.
    private var slots: [Slot] = []
    private var ready = CircularBuffer<Item>()
    private var pending: [TokenEntry] = []
    private var pendingIndex = 0
    private var feedFinished = false
    private var stopping = false
    private var finished = false
    private var pumpScheduled = false
    /// Something finished since the last pump: the next end of reads (or the scheduled pump,
    /// whichever comes first) fills the connections again.
    private var pumpWanted = false
    private var inFlight = 0
    private var retries: [Int: Scheduled<Void>] = [:]
    private var nextRetryID = 0
    private var everConnected = false
    private var summary = Summary()
    private var progressCounts = Progress()
    private var started = DispatchTime.now()
    private var done: EventLoopPromise<Summary>?
    private var lastConnectError: GatewayError?
    private var random = SystemRandomNumberGenerator()

    /// `template` is the notification sent to every token (its device token is ignored).
    public init(configuration: GatewayConfiguration, template: PushNotification, options: Options, feed: TokenFeed,
                output: BulkOutput, eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) throws {
        try template.validate()
        self.configuration = configuration
        self.options = options
        self.loop = eventLoop
        self.feed = feed
        self.output = output
        if case .token(let key) = configuration.credential {
            tokens = ProviderTokenCache(key: key, clock: configuration.clock, renewAfter: configuration.tokenRenewAfter)
        } else {
            tokens = nil
        }
        let probe = GatewayConnection(configuration: configuration, eventLoopGroup: eventLoop)
        // Everything but :path and apns-id is the same for every token.
        let all = template.headers(authority: probe.authority)
        pseudoHeaders = (method: "POST", scheme: "https", authority: probe.authority)
        baseHeaders = all.filter { !$0.0.hasPrefix(":") && $0.0 != APNsHeader.id }
        body = ByteBuffer(bytes: template.payload)
    }

    /// Runs until every line has a result, or the run stops; returns what happened. Throws
    /// only when no connection could be made at all.
    public func run() async throws -> Summary {
        let promise = loop.makePromise(of: Summary.self)
        loop.execute { [self] in
            done = promise
            started = .now()
            feed.start { [self] in loop.execute { self.schedulePump() } }
            slots = (0..<max(1, options.connections)).map { _ in Slot() }
            for slot in slots { connect(slot) }
            watchConnections()
        }
        let summary = try await promise.futureResult.get()
        return summary
    }

    /// Stops taking new tokens, lets streams in flight finish (for at most
    /// ``Options/drainTimeout``), writes their results and ends the run. Safe from any thread.
    public func stop() {
        loop.execute { [self] in stop(.interrupted, message: nil, hint: nil) }
    }

    /// A snapshot for a progress display.
    public func progress() async -> Progress {
        (try? await loop.submit { [self] in
            var snapshot = progressCounts
            snapshot.inFlight = inFlight
            snapshot.requests = summary.requests
            snapshot.elapsed = GatewayConnection.seconds(since: started)
            snapshot.connected = everConnected
            return snapshot
        }.get()) ?? Progress()
    }

    // MARK: Connections

    private func connect(_ slot: Slot) {
        guard !slot.connecting, !finished, !(stopping && inFlight == 0) else { return }
        slot.connecting = true
        let delay = slot.failures == 0 ? 0 : backoff(attempt: slot.failures)
        let connection = GatewayConnection(configuration: configuration, eventLoopGroup: loop, tokenCache: tokens) { [self] in
            // End of a batch of answers: open the next streams now, and swift-nio-http2 sends
            // them all with one flush right after.
            if pumpWanted { pump() }
        }
        loop.scheduleTask(in: GatewayConnection.amount(delay)) { [self] in
            Task {
                do {
                    try await connection.connect()
                    loop.execute { [self] in connected(slot, connection) }
                } catch {
                    let failure = error as? GatewayError ?? GatewayError(.connectFailed, "Connecting failed: \(error).")
                    loop.execute { [self] in connectFailed(slot, failure) }
                }
            }
        }
    }

    private func connected(_ slot: Slot, _ connection: GatewayConnection) {
        slot.connecting = false
        slot.failures = 0
        everConnected = true
        summary.connections += 1
        if stopping {
            Task { await connection.close() }
            checkFinished()
            return
        }
        let lane = Lane(connection: connection)
        lane.multiplexer = connection.streamMultiplexer
        lane.batching = connection.batching
        if let old = slot.lane { retire(old, from: slot) }
        slot.lane = lane
        schedulePump()
    }

    private func connectFailed(_ slot: Slot, _ error: GatewayError) {
        slot.connecting = false
        slot.failures += 1
        lastConnectError = error
        if !error.isRetryable || slot.failures >= options.reconnectLimit {
            if !everConnected && !error.isRetryable {
                finish(throwing: error)
                return
            }
            // Other slots may still be working; give up only when none is.
            let alive = slots.contains { $0.connecting || ($0.lane?.connection.isUsable ?? false) }
            if !alive {
                if !everConnected {
                    finish(throwing: error)
                } else {
                    stop(.connectionFailed, message: "The gateway cannot be reached any more: \(error.message)",
                         hint: error.hint ?? "Check the network, then continue with --resume.")
                }
            }
            return
        }
        connect(slot)
    }

    private func retire(_ lane: Lane, from slot: Slot) {
        if lane.inFlight == 0 {
            Task { await lane.connection.close() }
        } else {
            slot.retired.append(lane)
        }
    }

    /// Once a second: a connection with streams in flight and no answer for the request timeout
    /// is closed; its streams count as lost in flight and are sent again on a new one.
    private func watchConnections() {
        loop.scheduleTask(in: .seconds(1)) { [self] in
            guard !finished else { return }
            let limit = configuration.timeouts.request
            for slot in slots {
                for lane in slot.retired + [slot.lane].compactMap({ $0 }) where lane.inFlight > 0 {
                    if GatewayConnection.seconds(since: lane.lastProgress) > limit {
                        lane.lastProgress = .now()
                        Task { await lane.connection.close() }
                    }
                }
            }
            watchConnections()
        }
    }

    // MARK: The pump

    private func schedulePump() {
        pumpWanted = true
        guard !pumpScheduled else { return }
        pumpScheduled = true
        loop.execute { [self] in
            pumpScheduled = false
            pump()
        }
    }

    /// Fills every usable connection up to its limit, journals the batch, then writes it.
    private func pump() {
        pumpWanted = false
        guard !finished else { return }
        var batch: [(Item, Lane)] = []
        for slot in slots {
            guard let lane = slot.lane, lane.connection.isUsable, lane.multiplexer != nil else {
                if slot.lane.map({ !$0.connection.isUsable }) ?? false, !slot.connecting, !stopping || inFlight > 0 {
                    if let old = slot.lane { retire(old, from: slot) }
                    slot.lane = nil
                    connect(slot)
                }
                continue
            }
            let limit = min(lane.connection.maxConcurrentStreams ?? options.maxInFlightPerConnection, options.maxInFlightPerConnection)
            while lane.inFlight < limit, let item = nextItem() {
                if lane.inFlight == 0 { lane.lastProgress = .now() }
                lane.inFlight += 1
                inFlight += 1
                item.attempts += 1
                batch.append((item, lane))
            }
        }
        if !batch.isEmpty {
            for (item, _) in batch { output.journalSend(line: item.line, apnsID: item.apnsIDText, attempt: item.attempts) }
            output.flushJournal()  // the journal reaches the kernel before any of these streams exist
            summary.requests += batch.count
            var lanes: [Lane] = []
            for (item, lane) in batch {
                if !lanes.contains(where: { $0 === lane }) {
                    lanes.append(lane)
                    lane.batching?.beginBatch()
                }
                submit(item, on: lane)
            }
            for lane in lanes { lane.batching?.endBatch() }
        }
        output.flushResults()
        if let failure = output.failure, !stopping {
            stop(.outputFailed, message: "Results cannot be written: \(failure).", hint: "Free some disk space, then continue with --resume.")
        }
        checkFinished()
    }

    private func nextItem() -> Item? {
        if let item = ready.popFirst() { return item }
        while !stopping {
            if pendingIndex >= pending.count {
                guard !feedFinished else { return nil }
                let (entries, finished) = feed.take()
                pending = entries
                pendingIndex = 0
                if finished { feedFinished = true }
                if entries.isEmpty { return nil }
            }
            let entry = pending[pendingIndex]
            pendingIndex += 1
            switch entry {
            case .token(let line, let token):
                return Item(line: line, token: token)
            case .malformed(let line, let text, let message):
                progressCounts.failed += 1
                summary.malformed += 1
                record(BulkResult(line: line, token: text, attempts: 0, error: "malformed_token", message: message))
            case .uncertain(let line, let token, let apnsID, let attempts):
                if options.resendUncertain {
                    return Item(line: line, token: token, apnsID: apnsID, attempts: attempts, uncertain: true)
                }
                summary.failed += 1
                summary.uncertain += 1
                progressCounts.failed += 1
                record(BulkResult(line: line, token: token.hex, apnsID: apnsID, attempts: attempts, uncertain: true,
                                  error: "outcome_unknown",
                                  message: "An earlier run sent this and was stopped before the answer was recorded; it may have been delivered. Not sent again (--resend-uncertain sends it)."))
            case .mismatch(_, let message):
                stop(.wrongTokenFile, message: message,
                     hint: "Resume with the same token file the results were written for, or start a new results file.")
                return nil
            }
        }
        return nil
    }

    private func submit(_ item: Item, on lane: Lane) {
        var headers = HPACKHeaders()
        headers.reserveCapacity(baseHeaders.count + 6)
        headers.add(name: ":method", value: pseudoHeaders.method)
        headers.add(name: ":scheme", value: pseudoHeaders.scheme)
        headers.add(name: ":path", value: "/3/device/" + item.hex, indexing: .nonIndexable)
        headers.add(name: ":authority", value: pseudoHeaders.authority)
        for (name, value) in baseHeaders { headers.add(name: name, value: value) }
        headers.add(name: APNsHeader.id, value: item.apnsIDText, indexing: .nonIndexable)
        if let tokens {
            guard let jwt = try? tokens.token() else {
                completed(item, lane, .failure(GatewayError(.invalidCredential, "The provider token cannot be signed.")), written: false)
                return
            }
            headers.add(name: APNsHeader.authorization, value: "bearer " + jwt)
        }
        // No timer per stream: ``watchConnections()`` closes a connection that stops answering.
        let request = StreamRequest(headers: headers, body: body, timeout: nil, timeoutSeconds: configuration.timeouts.request)
        guard let multiplexer = lane.multiplexer else { return }
        lane.connection.open(request, on: multiplexer) { [self] result, written in
            // Always on the event loop, usually while swift-nio-http2 reads answers.
            completed(item, lane, result, written: written)
        }
    }

    // MARK: Outcomes

    private func completed(_ item: Item, _ lane: Lane, _ result: Result<PushResponse, GatewayError>, written: Bool) {
        lane.lastProgress = .now()
        lane.inFlight -= 1
        inFlight -= 1
        switch result {
        case .success(let response):
            if response.isAccepted {
                finalAnswer(item, response)
            } else if response.isRetryable {
                // APNs did not take it: safe to send again.
                output.journalClear(line: item.line)
                if stopping {
                    summary.unfinished += 1
                } else if item.countedAttempts < options.maxAttempts {
                    retryLater(item, after: retryDelay(item, response))
                } else {
                    finalAnswer(item, response)
                }
            } else {
                finalAnswer(item, response)
                if let reason = response.reason, Self.affectsEveryNotification(reason), !stopping {
                    stop(.credentialRejected, message: "APNs answered \(response.status) \(reason.rawValue): \(reason.explanation)",
                         hint: reason.fix)
                }
            }
        case .failure(let error):
            let notProcessed = !written || (error.code == .goAway && error.isRetryable)
                || (error.code == .streamReset && error.isRetryable)
            if error.code == .goAway && !error.isRetryable {
                // At or below GOAWAY's last-stream-id: the server says it processed it, but the
                // answer never came. Not sent again.
                finalFailure(item, error, code: "unanswered_after_goaway", uncertain: true)
            } else if notProcessed {
                output.journalClear(line: item.line)
                item.refusals += 1
                if stopping {
                    summary.unfinished += 1
                } else if item.refusals > options.maxAttempts * 4 {
                    finalFailure(item, error, code: error.code.description, uncertain: item.uncertain)
                } else {
                    ready.append(item)
                }
            } else if error.code == .invalidCredential {
                finalFailure(item, error, code: error.code.description, uncertain: item.uncertain)
                stop(.credentialRejected, message: error.message, hint: error.hint)
            } else {
                // The answer was lost with the connection (or never came in time): the server may
                // have delivered it. Sent again, and marked.
                item.uncertain = true
                if stopping {
                    summary.unfinished += 1
                } else if item.countedAttempts < options.maxAttempts {
                    ready.append(item)
                } else {
                    finalFailure(item, error, code: error.code.description, uncertain: true)
                }
            }
        }
        if lane.inFlight == 0 {
            for slot in slots where slot.retired.contains(where: { $0 === lane }) {
                slot.retired.removeAll { $0 === lane }
                Task { await lane.connection.close() }
            }
        }
        schedulePump()
    }

    private func retryDelay(_ item: Item, _ response: PushResponse) -> Double {
        let jittered = backoff(attempt: item.countedAttempts)
        guard let retryAfter = response.retryAfter else { return jittered }
        return max(jittered, min(Double(retryAfter), options.retryAfterCap))
    }

    private func backoff(attempt: Int) -> Double {
        let ceiling = min(options.backoffCap, options.backoffBase * pow(2, Double(max(0, attempt - 1))))
        return Double.random(in: 0...ceiling, using: &random)
    }

    private func retryLater(_ item: Item, after delay: Double) {
        let id = nextRetryID
        nextRetryID += 1
        retries[id] = loop.scheduleTask(in: GatewayConnection.amount(delay)) { [self] in
            guard retries.removeValue(forKey: id) != nil else { return }
            ready.append(item)
            schedulePump()
        }
    }

    private func finalAnswer(_ item: Item, _ response: PushResponse) {
        if response.isAccepted {
            summary.accepted += 1
            progressCounts.accepted += 1
        } else {
            summary.rejected[response.reason?.rawValue ?? "HTTP \(response.status)", default: 0] += 1
            progressCounts.rejected += 1
        }
        if item.attempts > 1 { summary.retried += 1 }
        if item.uncertain { summary.uncertain += 1 }
        record(BulkResult(line: item.line, token: item.hex, status: response.status, reason: response.reason,
                          apnsID: item.apnsID, attempts: item.attempts, uncertain: item.uncertain, timestamp: response.timestamp))
    }

    private func finalFailure(_ item: Item, _ error: GatewayError, code: String, uncertain: Bool) {
        summary.failed += 1
        progressCounts.failed += 1
        if item.attempts > 1 { summary.retried += 1 }
        if uncertain { summary.uncertain += 1 }
        record(BulkResult(line: item.line, token: item.hex, apnsID: item.apnsID, attempts: item.attempts, uncertain: uncertain,
                          error: code, message: error.message))
    }

    private func record(_ result: BulkResult) {
        summary.results += 1
        progressCounts.finished += 1
        output.record(result)
    }

    /// Reasons that concern the credential, the topic or the notification itself rather than
    /// one device: every other token would get the same answer.
    static func affectsEveryNotification(_ reason: APNsReason) -> Bool {
        guard reason.isKnown else { return false }
        let perDevice: Set<APNsReason> = [.badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken,
                                          .tooManyRequests, .internalServerError, .serviceUnavailable, .idleTimeout, .shutdown]
        return !perDevice.contains(reason)
    }

    // MARK: Ending

    private func stop(_ cause: StopCause, message: String?, hint: String?) {
        guard !finished else { return }
        if summary.stoppedBy == nil {
            summary.stoppedBy = cause
            summary.stopMessage = message
            summary.stopHint = hint
        }
        guard !stopping else {
            if cause == .interrupted { closeEverything() }  // a second Ctrl-C: stop waiting
            return
        }
        stopping = true
        feed.stop()
        summary.unfinished += ready.count
        ready.removeAll()
        for (_, task) in retries { task.cancel() }
        summary.unfinished += retries.count
        retries.removeAll()
        if inFlight > 0 {
            loop.scheduleTask(in: GatewayConnection.amount(options.drainTimeout)) { [self] in closeEverything() }
        }
        schedulePump()
    }

    private func closeEverything() {
        for slot in slots {
            for lane in slot.retired + [slot.lane].compactMap({ $0 }) {
                Task { await lane.connection.close() }
            }
        }
    }

    private func checkFinished() {
        guard !finished, inFlight == 0, ready.isEmpty, retries.isEmpty else { return }
        let inputDone = stopping || (feedFinished && pendingIndex >= pending.count)
        guard inputDone else { return }
        finished = true
        closeEverything()
        output.finish(clean: !stopping)
        summary.seconds = GatewayConnection.seconds(since: started)
        summary.rate = summary.seconds > 0 ? Double(summary.results) / summary.seconds : 0
        if let failure = output.failure, summary.stoppedBy == nil {
            summary.stoppedBy = .outputFailed
            summary.stopMessage = "Results cannot be written: \(failure)."
        }
        if let readError = feed.readError, summary.stoppedBy == nil {
            summary.stoppedBy = .outputFailed
            summary.stopMessage = "The tokens could not all be read: \(readError)."
        }
        done?.succeed(summary)
    }

    private func finish(throwing error: GatewayError) {
        guard !finished else { return }
        finished = true
        feed.stop()
        closeEverything()
        output.finish(clean: false)
        done?.fail(error)
    }
}

/// Where a bulk run's results and journal go. Loop-confined, like the sender.
public final class BulkOutput: @unchecked Sendable {
    let results: AppendFile
    let journal: AppendFile?

    /// `journal` nil: no crash protection (results on standard output).
    public init(results: AppendFile, journal: AppendFile?) {
        self.results = results
        self.journal = journal
    }

    func record(_ result: BulkResult) { results.append(result.jsonLine) }
    func journalSend(line: Int, apnsID: String, attempt: Int) { journal?.append("S \(line) \(apnsID) \(attempt)\n") }
    func journalClear(line: Int) { journal?.append("C \(line)\n") }
    func flushJournal() { journal?.flush() }
    func flushResults() { results.flush() }

    var failure: String? { results.failure ?? journal?.failure }

    /// Closes both; a run that ended with every line done no longer needs its journal.
    func finish(clean: Bool) {
        results.close()
        journal?.close()
        if clean, results.failure == nil, let path = journal?.path {
            unlink(path)
        }
    }
}
