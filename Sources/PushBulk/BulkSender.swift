import Dispatch
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import PushCore
import PushGateway
import PushTransport

/// Sends one notification to every token of a ``TokenFeed`` over one HTTP/2 connection (or a
/// few) and writes exactly one final result per token line.
///
/// Every decision (what to send where, what an ending means, what is sent again, when the run
/// ends) is ``BulkEngine``'s; this is the thin event-loop driver that carries out its actions:
/// it connects, journals, opens streams, writes results, and reports what happens back to the
/// engine. Everything runs on one event loop: connections, streams, the engine and the output.
public final class BulkSender: @unchecked Sendable {
    final class Lane {
        let connection: GatewayConnection
        let streams: FrameStreams
        var batching: BatchingHandler?
        init(connection: GatewayConnection, streams: FrameStreams) {
            self.connection = connection
            self.streams = streams
        }
    }

    public let configuration: GatewayConfiguration
    let loop: any EventLoop
    let feed: TokenFeed
    let output: BulkOutput
    let tokens: ProviderTokenCache?
    let encoder: RequestEncoder
    let body: ByteBuffer
    /// Each notification carries a collapse ID derived from its `apns-id`
    /// (``BulkDelivery/derivesCollapseID(for:)``), so a second delivery replaces the first.
    let derivesCollapseID: Bool

    // Loop-confined state.
    var engine: BulkEngine
    private var lanes: [BulkEngine.ConnectionID: Lane] = [:]
    private var batchingLanes: [Lane] = []
    var finished = false
    private var pumpScheduled = false
    /// Something finished since the last pump: the end of the current batch of reads fills the
    /// connections again, so that the new requests leave with the same flush.
    private var pumpWanted = false
    private var lastConnectError: GatewayError?
    private var ticks = 0
    private var done: EventLoopPromise<BulkSummary>?
    private let origin = DispatchTime.now()
    var lastAuthorization: (bearer: String, value: String)?
    private var headerCount = 10

    /// `template` is the notification sent to every token.
    public init(
        configuration: GatewayConfiguration,
        template: NotificationTemplate,
        options: BulkEngine.Configuration,
        feed: TokenFeed,
        output: BulkOutput,
        eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
    ) throws {
        do {
            try template.validate()
        } catch let error as PushCoreError {
            throw GatewayError(.invalidNotification, error.message, hint: error.hint)
        }
        self.configuration = configuration
        self.loop = eventLoop
        self.feed = feed
        self.output = output
        tokens = ProviderTokenCache(
            for: configuration.credential,
            clock: configuration.clock,
            renewAfter: configuration.tokenRenewAfter
        )
        var options = options
        options.requestTimeout = configuration.timeouts.request
        // A token from elsewhere can be replaced when APNs refuses it; one signed here cannot.
        options.refreshesProviderToken = tokens?.needsPreparing == true
        options.pushType = template.pushType
        derivesCollapseID = BulkDelivery.derivesCollapseID(for: template)
        engine = BulkEngine(configuration: options)
        let endpoint = configuration.endpoint
        encoder = RequestEncoder(
            template: template,
            authority: RequestEncoder.authority(host: endpoint.host, port: endpoint.port)
        )
        body = ByteBuffer(bytes: template.payload)
    }

    /// Runs until every line has a result, or the run stops; returns what happened. Throws
    /// only when no connection could be made at all.
    public func run() async throws -> BulkSummary {
        // A key held elsewhere: its first token is fetched before anything is sent, and fetched
        // again off the event loop while the run lasts (the cache answers the loop at once).
        let refresher = try await startTokenRefresh()
        defer { refresher?.cancel() }
        let promise = loop.makePromise(of: BulkSummary.self)
        loop.execute { [self] in
            done = promise
            feed.start { [self] in loop.execute { self.schedulePump() } }
            perform(engine.start(now: now()))
            tick()
        }
        return try await promise.futureResult.get()
    }

    /// Stops taking new tokens, lets streams in flight finish (for a bounded time), writes their
    /// results and ends the run; a second call stops waiting. Safe from any thread.
    public func stop() {
        loop.execute { [self] in
            guard !finished else { return }
            perform(engine.stop(.interrupted, message: nil, hint: nil, now: now()))
        }
    }

    /// A snapshot for a progress display.
    public func progress() async -> BulkProgress {
        (try? await loop.submit { [self] in
            var snapshot = engine.progress
            snapshot.inFlight = engine.inFlightCount
            snapshot.elapsed = engine.elapsed(now: now())
            return snapshot
        }.get()) ?? BulkProgress()
    }

    func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds - origin.uptimeNanoseconds) / 1e9 }

    // MARK: Carrying out the engine's actions

    func perform(_ actions: [BulkEngine.Action]) {
        for action in actions {
            switch action {
            case .connect(let id, let delay):
                connect(id, after: delay)
            case .journal(let sends):
                // The answers already recorded reach the results file first: a run killed from
                // here on leaves uncertain only what is really in flight, not also the answers
                // of the last batch (which would then be reported as outcome_unknown on resume).
                output.flushResults()
                for send in sends {
                    output.journalSend(line: send.line, token: send.token, apnsID: send.apnsID, attempt: send.attempt)
                }
                output.flushJournal()  // the journal reaches the kernel before any of these streams exist
                let failure = output.journalFailure
                perform(
                    engine.journalWritten(
                        ok: failure == nil,
                        now: now(),
                        failure: failure,
                        remedy: output.failureRemedy
                    )
                )
            case .open(let send):
                open(send)
            case .record(let result):
                output.record(result)
            case .clearJournal(let line):
                output.journalClear(line: line)
            case .cancel(let sendID, let id):
                lanes[id]?.streams.cancel(sendID)  // RST_STREAM CANCEL
            case .goAway(let id):
                lanes[id]?.connection.sendGoAway()
            case .close(let id):
                if let lane = lanes[id] { Task { await lane.connection.close() } }
            case .stopReading:
                feed.stop()
            case .finished(let summary):
                finish(summary)
            case .refreshProviderToken:
                refreshProviderToken()
            case .abort(let message):
                finished = true
                let done = self.done
                let error = lastConnectError ?? GatewayError(.connectFailed, message)
                loop.execute { done?.fail(error) }
            }
        }
        for lane in batchingLanes { lane.batching?.endBatch() }
        batchingLanes.removeAll(keepingCapacity: true)
    }

    /// The engine's summary is final: how the run ended is its decision (a read error reached
    /// it as ``BulkEngine/inputFailed(_:)``); the feed only adds what it counted.
    private func finish(_ summary: BulkSummary) {
        finished = true
        var completed = summary
        completed.skipped = feed.skipped
        completed.duplicates = feed.duplicates
        // Handed over once the task that finished the run is over: the rest of it (a pump's last
        // flush, the batch's end) still writes the results file, which the caller goes on to
        // close on another thread as soon as it has the summary.
        let done = self.done
        let summary = completed
        loop.execute { done?.succeed(summary) }
    }

    private func connect(_ id: BulkEngine.ConnectionID, after delay: Double) {
        let streams = FrameStreams { [unowned self] sendID, outcome in streamEnded(sendID, on: id, outcome) }
        let connection = GatewayConnection(
            configuration: configuration,
            eventLoopGroup: loop,
            tokenCache: tokens,
            readComplete: { [self] in
                // End of a batch of answers: open the next streams now, and swift-nio-http2 sends
                // them all with one flush right after.
                if pumpWanted { pump() }
            },
            events: { [self] event in connectionEvent(id, event) },
            frameStreams: streams
        )
        loop.scheduleTask(in: GatewayConnection.amount(delay)) { [self] in
            Task {
                do {
                    try await connection.connect()
                    loop.execute { [self] in connected(id, connection, streams) }
                } catch {
                    let failure =
                        error as? GatewayError
                        ?? GatewayError(.connectFailed, "Connecting failed: \(UserFacing.describe(error)).")
                    loop.execute { [self] in
                        lastConnectError = failure
                        perform(
                            engine.connectFailed(
                                id,
                                message: failure.message,
                                retryable: failure.isRetryable,
                                now: now()
                            )
                        )
                    }
                }
            }
        }
    }

    private func connected(_ id: BulkEngine.ConnectionID, _ connection: GatewayConnection, _ streams: FrameStreams) {
        let lane = Lane(connection: connection, streams: streams)
        lane.batching = connection.batching
        lanes[id] = lane
        perform(engine.connected(id, maxConcurrentStreams: connection.maxConcurrentStreams, now: now()))
        if !connection.isUsable {
            // It went away between the handshake and now.
            if let goAway = connection.goAway {
                perform(
                    engine.goAway(
                        id,
                        lastStreamID: goAway.lastStreamID,
                        reason: goAway.reason ?? goAway.errorCode,
                        now: now()
                    )
                )
            }
            perform(engine.connectionClosed(id, now: now()))
            lanes[id] = nil
        }
        schedulePump()
    }

    private func connectionEvent(_ id: BulkEngine.ConnectionID, _ event: ConnectionEvent) {
        guard !finished, lanes[id] != nil else { return }  // before it is connected, connecting reports
        switch event {
        case .settings(let limit):
            engine.settings(id, maxConcurrentStreams: limit)
        case .goAway(let lastStreamID):
            let info = lanes[id]?.connection.goAway
            perform(engine.goAway(id, lastStreamID: lastStreamID, reason: info?.reason ?? info?.errorCode, now: now()))
        case .closed:
            lanes[id] = nil
            perform(engine.connectionClosed(id, now: now()))
        }
        schedulePump()
    }

    private func open(_ send: BulkEngine.Send) {
        guard let lane = lanes[send.connection] else {
            perform(engine.streamClosed(send.id, now: now()))
            return
        }
        let bearer: String?
        do {
            bearer = try tokens?.token()
        } catch {
            perform(
                engine.stop(.credentialRejected, message: "The provider token cannot be signed.", hint: nil, now: now())
            )
            perform(engine.streamClosed(send.id, now: now()))
            return
        }
        if !batchingLanes.contains(where: { $0 === lane }) {
            batchingLanes.append(lane)
            lane.batching?.beginBatch()
        }
        var headers = HPACKHeaders()
        headers.reserveCapacity(headerCount)
        encoder.forEachHeader(
            deviceHex: send.token,
            apnsID: send.apnsID,
            collapseID: derivesCollapseID ? BulkDelivery.collapseID(apnsID: send.apnsID) : nil,
            authorization: authorization(bearer)
        ) {
            headers.add(name: $0, value: $1, indexing: $2 ? .indexable : .nonIndexable)
        }
        headerCount = max(headerCount, headers.count)
        if let streamID = lane.streams.open(send.id, headers: headers, body: body) {
            engine.streamOpened(send.id, streamID: Int(streamID))
        } else {
            perform(engine.streamClosed(send.id, now: now()))  // never opened: not processed
        }
    }

    // MARK: Called by the streams, on the event loop

    func streamEnded(_ sendID: BulkEngine.SendID, on id: BulkEngine.ConnectionID, _ outcome: FrameStreams.Outcome) {
        guard !finished else { return }
        switch outcome {
        case .answered(let response):
            perform(engine.answered(sendID, response, now: now()))
        case .reset(let code):
            perform(engine.reset(sendID, code: code, now: now()))
        case .closed:
            perform(engine.streamClosed(sendID, now: now()))
        }
        schedulePump()
    }

    // MARK: The pump and the clock

    func schedulePump() {
        pumpWanted = true
        guard !pumpScheduled else { return }
        pumpScheduled = true
        loop.execute { [self] in
            pumpScheduled = false
            pump()
        }
    }

    /// Hands the engine what the feed has read, fills the connections, and writes the results.
    private func pump() {
        pumpWanted = false
        guard !finished else { return }
        while engine.wantsTokens {
            let (entries, feedDone) = feed.take()
            if entries.isEmpty && !feedDone { break }
            if feedDone, let readError = feed.readError { engine.inputFailed(readError) }
            perform(engine.tokens(entries, finished: feedDone, now: now()))
            if feedDone || finished { break }
        }
        guard !finished else { return }
        perform(engine.fill(now: now()))
        output.flushResults()
        if let failure = output.resultsFailure, !finished {
            perform(engine.outputFailed(failure, remedy: output.failureRemedy, now: now()))
        }
    }

    private func tick() {
        loop.scheduleTask(in: .milliseconds(250)) { [self] in
            guard !finished else { return }
            ticks += 1
            if ticks % 4 == 0, !output.results.isStillAtPath {
                // Whatever is written from now on is lost: stop sending at once.
                perform(engine.outputFailed("the results file was deleted or replaced", now: now()))
            }
            perform(engine.tick(now: now()))
            schedulePump()
            tick()
        }
    }
}
