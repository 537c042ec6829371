import Foundation
import PushBulk
import Testing

/// The bulk engine's rules, each driven event by event with no network.
@Suite struct BulkEngineTests {
    /// A driver with no I/O: collects the actions, confirms journals, tracks what was opened.
    struct Harness {
        var engine: BulkEngine
        var now: Double = 0
        var opened: [BulkEngine.Send] = []
        var records: [BulkResult] = []
        var cleared: [Int] = []
        var actions: [BulkEngine.Action] = []
        var journalOK = true
        var finished: BulkSummary?
        var nextStream: [Int: Int] = [:]

        init(_ configure: (inout BulkEngine.Configuration) -> Void = { _ in }) {
            var configuration = BulkEngine.Configuration()
            configure(&configuration)
            engine = BulkEngine(configuration: configuration, seed: 42)
        }

        mutating func apply(_ list: [BulkEngine.Action]) {
            for action in list {
                actions.append(action)
                switch action {
                case .journal:
                    apply(
                        engine.journalWritten(
                            ok: journalOK,
                            now: now,
                            failure: journalOK ? nil : "no space left on the device"
                        )
                    )
                case .open(let send):
                    opened.append(send)
                    let stream = nextStream[send.connection, default: 1]
                    nextStream[send.connection] = stream + 2
                    engine.streamOpened(send.id, streamID: stream)
                case .record(let result):
                    records.append(result)
                case .clearJournal(let line):
                    cleared.append(line)
                case .finished(let summary):
                    finished = summary
                default:
                    break
                }
            }
        }

        /// Starts, connects connection 1 with `limit`, feeds `count` tokens and fills.
        mutating func begin(tokens count: Int, limit: Int? = 100, finishedInput: Bool = true) {
            apply(engine.start(now: now))
            apply(engine.connected(1, maxConcurrentStreams: limit, now: now))
            let entries = (1...count).map {
                TokenEntry.token(line: $0, token: try! DeviceToken(bytes: [UInt8]($0.bytes)))
            }
            apply(engine.tokens(entries, finished: finishedInput, now: now))
            apply(engine.fill(now: now))
        }

        mutating func answer(_ send: BulkEngine.Send, status: Int = 200, reason: String? = nil) {
            let response = PushResponse(status: status, reason: reason.map(APNsReason.init(rawValue:)))
            apply(engine.answered(send.id, response, now: now))
        }

        func streamID(of send: BulkEngine.Send, index: Int) -> Int { 1 + 2 * index }

        /// Moves the clock to `time` and lets the engine act on it: its timers, then (with `fill`)
        /// what it may send.
        mutating func advance(to time: Double, fill: Bool = true) {
            now = time
            apply(engine.tick(now: now))
            if fill { apply(engine.fill(now: now)) }
        }

        /// Connection 1 closed, connection 2 (a limit of 100) up, and filled, at `now`.
        mutating func reconnect() {
            apply(engine.connectionClosed(1, now: now))
            apply(engine.connected(2, maxConcurrentStreams: 100, now: now))
            apply(engine.fill(now: now))
        }

        func results(line: Int) -> [BulkResult] { records.filter { $0.line == line } }
        var connects: [Int] { actions.compactMap { if case .connect(let id, _) = $0 { id } else { nil } } }
        var goAways: [Int] { actions.compactMap { if case .goAway(let id) = $0 { id } else { nil } } }
        var closes: [Int] { actions.compactMap { if case .close(let id) = $0 { id } else { nil } } }
    }

    @Test func answeredThenResetNoErrorIsANormalCompletionAndNeverCountsAsAbuse() {
        var harness = Harness { $0.unansweredResetsPerSecond = 5 }
        harness.begin(tokens: 50)
        #expect(harness.opened.count == 50)
        for send in harness.opened {
            harness.answer(send)
            // nginx ends every answered stream like this.
            harness.apply(harness.engine.reset(send.id, code: .noError, now: harness.now))
        }
        #expect(harness.goAways.isEmpty, "an answered stream's reset must not count toward the abuse limit")
        #expect(harness.connects == [1], "the connection must not be replaced")
        #expect(harness.records.count == 50)
        #expect(harness.records.allSatisfy { $0.status == 200 && !$0.uncertain && $0.attempts == 1 })
        #expect(harness.finished?.accepted == 50)
        #expect(harness.finished?.uncertain == 0)
    }

    @Test func unansweredResetsAboveTheLimitCloseTheConnectionWithGoAwayAndDrainInsteadOfResending() {
        var harness = Harness { $0.unansweredResetsPerSecond = 3 }
        harness.begin(tokens: 10)
        let sends = harness.opened
        for send in sends.prefix(4) { harness.apply(harness.engine.reset(send.id, code: .other("CANCEL"), now: 0)) }
        #expect(harness.goAways == [1], "this side says it is going away")
        #expect(!harness.closes.contains(1), "and waits for the answers in flight rather than closing")
        #expect(harness.connects == [1, 2], "a new connection takes its place")
        // The streams still in flight on connection 1 get their answers during the drain.
        for send in sends.dropFirst(4) { harness.answer(send) }
        for send in sends.dropFirst(4) {
            #expect(harness.results(line: send.line).count == 1)
            #expect(harness.results(line: send.line).first?.attempts == 1, "answered during the drain: never resent")
        }
        #expect(harness.opened.filter { $0.connection == 1 }.count == 10, "nothing new goes to a draining connection")
    }

    @Test func theDrainIsBoundedAndWhatStaysUnansweredIsUncertain() {
        var harness = Harness {
            $0.unansweredResetsPerSecond = 0
            $0.drainTimeout = 5
        }
        harness.begin(tokens: 3)
        let sends = harness.opened
        harness.apply(harness.engine.reset(sends[0].id, code: .other("INTERNAL_ERROR"), now: 0))
        #expect(harness.goAways == [1])
        harness.advance(to: 4, fill: false)
        #expect(!harness.closes.contains(1))
        harness.advance(to: 5, fill: false)
        #expect(harness.closes.contains(1), "closed once the drain time is over")
        harness.reconnect()
        let resent = harness.opened.filter { $0.connection == 2 }
        #expect(Set(resent.map(\.line)) == [1, 2, 3])
        for send in resent { harness.answer(send) }
        #expect(harness.records.count == 3)
        #expect(
            harness.records.allSatisfy { $0.uncertain },
            "their first answers were lost: they may be delivered twice"
        )
    }

    @Test func refusedStreamsAreNotProcessedResentAndNotUncertain() {
        var harness = Harness()
        harness.begin(tokens: 4)
        let first = harness.opened
        for send in first.prefix(2) { harness.apply(harness.engine.reset(send.id, code: .refusedStream, now: 0)) }
        #expect(Set(harness.cleared) == [1, 2], "their journal entries are void")
        harness.apply(harness.engine.fill(now: 0))
        let again = harness.opened.dropFirst(4)
        #expect(Set(again.map(\.line)) == [1, 2])
        #expect(again.allSatisfy { $0.attempt == 2 })
        #expect(again.map(\.apnsID) == first.prefix(2).map(\.apnsID), "the same apns-id on every send")
        for send in again + first.suffix(2) { harness.answer(send) }
        #expect(harness.records.count == 4)
        #expect(harness.records.allSatisfy { !$0.uncertain })
        #expect(harness.goAways.isEmpty, "refusals are not abuse")
    }

    @Test func streamsAboveGoAwaysLastStreamIDAreResentAndThoseAtOrBelowAreWaitedFor() {
        var harness = Harness()
        harness.begin(tokens: 6)
        let sends = harness.opened  // streams 1, 3, 5, 7, 9, 11
        harness.apply(harness.engine.goAway(1, lastStreamID: 5, now: 0))
        #expect(Set(harness.cleared) == [4, 5, 6], "above the last-stream-id: not processed")
        #expect(harness.connects == [1, 2])
        // The streams the server did process still get their answers.
        for send in sends.prefix(3) { harness.answer(send) }
        harness.reconnect()
        let resent = harness.opened.filter { $0.connection == 2 }
        #expect(Set(resent.map(\.line)) == [4, 5, 6])
        for send in resent { harness.answer(send) }
        #expect(harness.records.count == 6)
        #expect(harness.records.allSatisfy { $0.status == 200 && !$0.uncertain })
    }

    @Test func streamsClosedBeforeTheGoAwayArrivesAreDecidedByIt() {
        // swift-nio-http2 closes the streams a GOAWAY cuts off before the GOAWAY itself reaches
        // the connection's handlers.
        var harness = Harness()
        harness.begin(tokens: 4)
        let sends = harness.opened  // streams 1, 3, 5, 7
        harness.apply(harness.engine.streamClosed(sends[1].id, now: 0))
        harness.apply(harness.engine.streamClosed(sends[3].id, now: 0))
        #expect(harness.records.isEmpty && harness.cleared.isEmpty, "not decided before the GOAWAY is known")
        harness.apply(harness.engine.goAway(1, lastStreamID: 3, now: 0))
        #expect(Set(harness.cleared) == [3, 4], "streams 5 and 7, closed or still open, were not processed")
        #expect(
            harness.results(line: 2).first?.error == .unansweredAfterGoAway,
            "stream 3 was processed, its answer lost"
        )
        #expect(harness.results(line: 2).first?.uncertain == true)
    }

    @Test func aLostConnectionWithoutGoAwayMakesItsAnswersUncertainAndResendsThem() {
        var harness = Harness()
        harness.begin(tokens: 2)
        harness.answer(harness.opened[0])
        harness.apply(harness.engine.connectionClosed(1, now: 0))
        #expect(harness.cleared.isEmpty, "it may have been delivered: its journal entry stays")
        harness.apply(harness.engine.connected(2, maxConcurrentStreams: 100, now: 0))
        harness.apply(harness.engine.fill(now: 0))
        let resent = harness.opened.filter { $0.connection == 2 }
        #expect(resent.map(\.line) == [2])
        harness.answer(resent[0])
        #expect(harness.results(line: 2).first?.uncertain == true)
        #expect(harness.results(line: 1).first?.uncertain == false)
    }

    @Test func nothingIsSentWhoseJournalEntryWasNotWrittenAndTheRunStops() {
        var harness = Harness()
        harness.journalOK = false
        harness.begin(tokens: 20)
        #expect(harness.opened.isEmpty, "no stream may exist for an unjournaled send")
        #expect(harness.finished?.stoppedBy == .outputFailed)
        #expect(harness.finished?.unfinished == 20, "every line read is accounted for")
        #expect(harness.finished?.requests == 0)
    }

    @Test func aResultsWriteFailureStopsTheRunWithEveryLineInFlightAccountedFor() {
        var harness = Harness()
        harness.begin(tokens: 10, limit: 4)
        #expect(harness.opened.count == 4)
        harness.apply(harness.engine.outputFailed("no space left on the device", now: 0))
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.opened.count == 4, "nothing more is sent")
        for send in harness.opened { harness.answer(send) }
        #expect(harness.finished?.stoppedBy == .outputFailed)
        let summary = harness.finished
        #expect((summary?.results ?? 0) + (summary?.unfinished ?? 0) <= 10)
        #expect(summary?.results == 4, "the answers in flight still get their results")
    }

    @Test func linesStoppedByAFatalRejectionAreNotFinal() {
        var harness = Harness()
        harness.begin(tokens: 5)
        let sends = harness.opened
        harness.answer(sends[0])
        harness.answer(sends[1], status: 403, reason: "BadCertificateEnvironment")
        #expect(harness.engine.summary.stoppedBy == .credentialRejected)
        for send in sends.dropFirst(2) { harness.answer(send, status: 403, reason: "BadCertificateEnvironment") }
        #expect(harness.records.map(\.line) == [1], "only the accepted line is final")
        #expect(
            Set(harness.cleared) == [2, 3, 4, 5],
            "the others are cleared from the journal, so --resume sends them"
        )
        #expect(harness.finished?.unfinished == 4)
    }

    @Test func perDeviceRejectionsAreFinalAndDoNotStopTheRun() {
        var harness = Harness()
        harness.begin(tokens: 3)
        for send in harness.opened { harness.answer(send, status: 400, reason: "BadDeviceToken") }
        #expect(harness.records.count == 3)
        #expect(harness.finished?.stoppedBy == nil)
        #expect(harness.finished?.rejected["BadDeviceToken"] == 3)
    }

    @Test func maxAttemptsCapsEverySendRefusalsIncluded() {
        var harness = Harness { $0.maxAttempts = 3 }
        harness.begin(tokens: 1)
        var sends = 0
        while harness.finished == nil, sends < 20 {
            guard let send = harness.opened.last else { break }
            sends += 1
            if sends % 2 == 0 {
                harness.apply(harness.engine.reset(send.id, code: .refusedStream, now: harness.now))
            } else {
                harness.answer(send, status: 503, reason: "ServiceUnavailable")
            }
            harness.advance(to: harness.now + 100)
        }
        #expect(harness.opened.count == 3, "three sends at most, whatever the mix of refusals and retryable answers")
        #expect(harness.records.count == 1)
        #expect(harness.records.first?.attempts == 3)
    }

    @Test func retriesWaitForTheirBackoffAndRetryAfter() {
        var harness = Harness()
        harness.begin(tokens: 1)
        let send = harness.opened[0]
        harness.apply(
            harness.engine.answered(send.id, PushResponse(status: 429, reason: .tooManyRequests, retryAfter: 7), now: 0)
        )
        harness.advance(to: 6.9)
        #expect(harness.opened.count == 1, "not before Retry-After")
        harness.advance(to: 7)
        #expect(harness.opened.count == 2)
        #expect(harness.opened[1].apnsID == send.apnsID)
    }

    @Test func aRequestUnansweredForTheTimeoutIsCancelledAndResentAsUncertain() {
        var harness = Harness {
            $0.requestTimeout = 3
            $0.requestTimeoutGrowth = 2
        }
        harness.begin(tokens: 2)
        harness.answer(harness.opened[0])
        harness.advance(to: 2.9, fill: false)
        #expect(!harness.actions.contains { if case .cancel = $0 { true } else { false } })
        // Reaching the deadline doubles it instead of making a copy...
        harness.advance(to: 5.9, fill: false)
        #expect(!harness.actions.contains { if case .cancel = $0 { true } else { false } })
        // ...and the grown deadline gives the request up.
        harness.advance(to: 6, fill: false)
        #expect(harness.actions.contains(.cancel(harness.opened[1].id, 1)))
        harness.apply(harness.engine.fill(now: harness.now))
        let again = harness.opened.last!
        #expect(again.line == 2 && again.attempt == 2)
        harness.answer(again)
        #expect(harness.results(line: 2).first?.uncertain == true)
    }

    @Test func neverMoreInFlightThanTheServersCurrentLimit() {
        var harness = Harness()
        harness.begin(tokens: 30, limit: 1)
        #expect(harness.opened.count == 1)
        harness.answer(harness.opened[0])
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.opened.count == 2)
        harness.engine.settings(1, maxConcurrentStreams: 10)
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.opened.count == 11, "a raised limit is followed")
        harness.engine.settings(1, maxConcurrentStreams: 2)
        for send in harness.opened.suffix(10) { harness.answer(send) }
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.engine.inFlightCount == 2, "and so is a lowered one")
    }

    @Test func anInterruptedRunLetsTheStreamsInFlightFinishAndLeavesTheRestForResume() {
        var harness = Harness()
        harness.begin(tokens: 10, limit: 3)
        harness.apply(harness.engine.stop(.interrupted, message: nil, hint: nil, now: 0))
        #expect(harness.actions.contains(.stopReading))
        for send in harness.opened { harness.answer(send) }
        #expect(harness.records.count == 3)
        #expect(harness.finished?.stoppedBy == .interrupted)
        #expect(harness.opened.count == 3)
    }

    @Test func uncertainLinesFromAnEarlierRunAreReportedNotResent() {
        var harness = Harness()
        harness.apply(harness.engine.start(now: 0))
        harness.apply(harness.engine.connected(1, maxConcurrentStreams: 10, now: 0))
        let token = try! DeviceToken(bytes: [1, 2, 3])
        harness.apply(
            harness.engine.tokens(
                [.uncertain(line: 1, token: token, apnsID: UUID(), attempts: 1)],
                finished: true,
                now: 0
            )
        )
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.opened.isEmpty)
        #expect(harness.records.first?.error == .outcomeUnknown)
        #expect(harness.finished != nil)
    }

    @Test func aGatewayThatCannotBeReachedAbortsAfterTheReconnectLimit() {
        var harness = Harness { $0.reconnectLimit = 3 }
        harness.apply(harness.engine.start(now: 0))
        for attempt in 0..<3 {
            let id = harness.connects.last!
            harness.apply(harness.engine.connectFailed(id, message: "refused", retryable: true, now: Double(attempt)))
        }
        #expect(harness.connects.count == 3)
        #expect(harness.actions.contains(.abort(message: "refused")))
    }
}

extension Int {
    /// 32 bytes that differ for every line.
    fileprivate var bytes: [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: (self >> (8 * ($0 % 4))) &+ $0) } }
}
