import Foundation
import PushBulk
import Testing

/// How the engine treats a server that loses answers: fewer streams in flight (halved once per
/// round, grown back as answers return), a longer deadline before a copy, a stop when
/// connections close before answering anything, and what is never sent again.
@Suite struct BulkEngineBackoffTests {
    typealias Harness = BulkEngineTests.Harness

    @Test func aConnectionLostWithStreamsInFlightHalvesThemOnceAndAnswersGrowThemBack() {
        var harness = Harness()
        harness.begin(tokens: 400, limit: 100)
        #expect(harness.opened.count == 100)
        harness.answer(harness.opened[0])
        harness.reconnect()
        let second = harness.opened.filter { $0.connection == 2 }
        #expect(second.count == 50, "99 answers lost with one connection halve the streams once: \(second.count)")
        #expect(harness.engine.summary.inFlightReductions == 1)
        #expect(harness.engine.summary.fewestInFlight == 50)
        #expect(harness.engine.summary.lostAnswers == ["connection_closed": 99])
        // The lost ones go first, with the same apns-id, as uncertain resends.
        let first = Dictionary(uniqueKeysWithValues: harness.opened.prefix(100).map { ($0.line, $0.apnsID) })
        #expect(second.allSatisfy { first[$0.line] == $0.apnsID && $0.attempt == 2 })
        // A window's worth of answers grows it by one stream.
        for send in second { harness.answer(send) }
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.engine.inFlightCount == 51, "grown back additively: \(harness.engine.inFlightCount)")
    }

    @Test func theStreamsInFlightNeverGoBelowOneNorAboveTheServersLimit() {
        var harness = Harness()
        harness.begin(tokens: 40, limit: 4)
        for round in 0..<4 {
            let open = harness.opened.suffix(harness.engine.inFlightCount)
            // Every stream in flight is reset without an answer: one reduction per round.
            for send in open { harness.apply(harness.engine.reset(send.id, code: .other("CANCEL"), now: 0)) }
            harness.apply(harness.engine.fill(now: 0))
            #expect(harness.engine.inFlightCount == max(1, 4 >> (round + 1)), "round \(round)")
        }
        #expect(harness.engine.summary.fewestInFlight == 1)
        var grown = Harness()
        grown.begin(tokens: 3_000, limit: 10)
        var next = 0
        while next < grown.opened.count, next < 2_000 {
            grown.answer(grown.opened[next])
            next += 1
            grown.apply(grown.engine.fill(now: 0))
            #expect(grown.engine.inFlightCount <= 10, "never above the server's limit")
        }
        #expect(next == 2_000)
    }

    @Test func aFirstTimeoutIsAnsweredByWaitingLongerNotByACopy() {
        var harness = Harness { $0.requestTimeout = 1 }
        harness.begin(tokens: 2)
        harness.advance(to: 1, fill: false)
        #expect(!harness.actions.contains { if case .cancel = $0 { true } else { false } }, "waited on")
        #expect(harness.engine.summary.requestTimeoutGrownTo == 2)
        #expect(harness.engine.summary.inFlightReductions == 1, "and fewer are sent at once")
        harness.now = 1.5
        for send in harness.opened { harness.answer(send) }
        #expect(harness.opened.count == 2, "nothing was sent twice")
        #expect(harness.records.allSatisfy { $0.status == 200 && !$0.uncertain && $0.attempts == 1 })
        #expect(harness.engine.summary.lostAnswers.isEmpty)
    }

    @Test func aLateRequestIsGivenUpOnlyAtTheGrownDeadlinesCapAndResentOnce() {
        var harness = Harness {
            $0.requestTimeout = 1
            $0.requestTimeoutGrowth = 4
        }
        harness.begin(tokens: 2)
        harness.advance(to: 1, fill: false)  // 2 s
        harness.advance(to: 2, fill: false)  // 4 s, the cap
        harness.advance(to: 3.9, fill: false)
        #expect(!harness.actions.contains { if case .cancel = $0 { true } else { false } }, "waited on")
        #expect(harness.engine.summary.requestTimeoutGrownTo == 4)
        #expect(harness.engine.summary.inFlightReductions == 1, "late answers halve the window once a round")
        harness.advance(to: 4)
        let cancels = harness.actions.filter { if case .cancel = $0 { true } else { false } }
        #expect(cancels.count == 2, "given up at the cap")
        let resent = harness.opened.dropFirst(2)
        #expect(resent.map(\.attempt) == [2, 2])
        #expect(resent.map(\.apnsID) == harness.opened.prefix(2).map(\.apnsID))
        #expect(harness.engine.summary.lostAnswers == ["timeout": 2])
        harness.now = 5
        for send in resent { harness.answer(send) }
        #expect(harness.records.allSatisfy { $0.status == 200 && $0.uncertain && $0.uncertainBecause == .timeout })
    }

    @Test func twoConnectionsInARowClosedBeforeAnsweringAnythingStopTheRunWithThatCause() {
        var harness = Harness()
        harness.begin(tokens: 300, limit: 100)
        harness.reconnect()  // nothing answered on connection 1
        #expect(harness.finished == nil, "one such connection is not yet a pattern")
        let second = harness.opened.filter { $0.connection == 2 }
        #expect(second.count == 50)
        harness.apply(harness.engine.connectionClosed(2, now: 0))
        let summary = harness.finished
        #expect(summary?.stoppedBy == .closedBeforeAnswering)
        #expect(summary?.stopMessage?.contains("2 connections in a row before answering anything") == true)
        #expect(harness.opened.count == 150, "nothing more was sent: no attempt is burnt")
        #expect(harness.records.isEmpty, "what was in flight stays in the journal for the resume")
        #expect(summary?.unanswered == 100, "\(String(describing: summary))")
    }

    @Test func aConnectionThatAnsweredSomethingStartsTheCountAgain() {
        var harness = Harness()
        harness.begin(tokens: 300, limit: 100)
        harness.reconnect()
        harness.answer(harness.opened.first { $0.connection == 2 }!)
        harness.apply(harness.engine.connectionClosed(2, now: 0))
        harness.apply(harness.engine.connected(3, maxConcurrentStreams: 100, now: 0))
        harness.apply(harness.engine.fill(now: 0))
        harness.apply(harness.engine.connectionClosed(3, now: 0))
        #expect(harness.finished == nil)
        #expect(harness.engine.summary.stoppedBy == nil)
    }

    @Test func aPushTypeThatActsTwiceIsNeverResentAfterALostAnswer() {
        var harness = Harness {
            $0.resendLostAnswers = false
            $0.pushType = .voip
        }
        harness.begin(tokens: 3)
        harness.answer(harness.opened[0])
        harness.apply(harness.engine.reset(harness.opened[1].id, code: .other("INTERNAL_ERROR"), now: 0))
        harness.apply(harness.engine.connectionClosed(1, now: 0))
        harness.apply(harness.engine.connected(2, maxConcurrentStreams: 100, now: 0))
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.opened.count == 3, "nothing sent again")
        for (line, cause) in [(2, BulkResultCode.streamReset), (3, .connectionClosed)] {
            let result = harness.results(line: line).first
            #expect(result?.uncertain == true && result?.uncertainBecause == cause && result?.error == cause)
            #expect(result?.attempts == 1)
            #expect(result?.message?.contains("voip notification would act twice") == true, "\(result?.message ?? "")")
        }
        #expect(harness.finished?.uncertain == 2)
    }

    @Test func aResumeResendsWhatAnEarlierRunHadInFlightWithTheSameAPNsID() {
        var harness = Harness { $0.resendUncertain = true }
        harness.apply(harness.engine.start(now: 0))
        harness.apply(harness.engine.connected(1, maxConcurrentStreams: 10, now: 0))
        let id = UUID()
        harness.apply(
            harness.engine.tokens(
                [.uncertain(line: 7, token: try! DeviceToken(bytes: [1, 2, 3]), apnsID: id, attempts: 1)],
                finished: true,
                now: 0
            )
        )
        harness.apply(harness.engine.fill(now: 0))
        #expect(harness.opened.map(\.apnsID) == [id.uuidString.lowercased()])
        #expect(harness.opened.first?.attempt == 2)
        harness.answer(harness.opened[0])
        let result = harness.results(line: 7).first
        #expect(result?.status == 200 && result?.uncertain == true && result?.uncertainBecause == .outcomeUnknown)
        #expect(harness.cleared.isEmpty)
    }
}
