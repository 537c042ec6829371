import Foundation
import PushBulk
import Testing

/// The engine is a value, and the transitions its phase added: a copy never shares state with
/// the original, a second stop stops waiting once, and a read error ends the run as stopped
/// after the lines read were sent.
@Suite struct BulkEngineValueTests {
    typealias Harness = BulkEngineTests.Harness

    @Test func aCopyOfTheEngineGoesOnAloneAndLeavesTheOriginalAsItWas() {
        var original = Harness()
        original.begin(tokens: 4)
        #expect(original.engine.inFlightCount == 4)
        var copy = original
        for send in copy.opened { copy.answer(send) }
        #expect(copy.finished?.accepted == 4, "the copy ran to its end")
        #expect(copy.engine.isFinished && copy.engine.inFlightCount == 0)
        #expect(!original.engine.isFinished, "the original did not see the copy's answers")
        #expect(original.engine.inFlightCount == 4 && original.engine.summary.results == 0)
        // And the original still takes its own answers, each once.
        for send in original.opened { original.answer(send) }
        #expect(original.finished?.accepted == 4)
        #expect(original.records.map(\.line).sorted() == [1, 2, 3, 4])
    }

    @Test func theSameSeedMakesTheSameApnsIDsAndEachIsAVersion4UUID() {
        var first = Harness()
        var second = Harness()
        first.begin(tokens: 20)
        second.begin(tokens: 20)
        let ids = first.opened.map(\.apnsID)
        #expect(ids == second.opened.map(\.apnsID), "repeatable from the seed")
        #expect(Set(ids).count == 20, "every notification its own apns-id")
        for id in ids {
            let uuid = UUID(uuidString: id)
            #expect(uuid != nil && id == id.lowercased(), "\(id) is a lower-case UUID")
            let characters = Array(id)
            #expect(characters[14] == "4", "version 4: \(id)")
            #expect("89ab".contains(characters[19]), "RFC 9562 variant: \(id)")
        }
    }

    @Test func aSecondStopClosesOnceAndTheDrainDeadlineDoesNotCloseAgain() {
        var harness = Harness { $0.drainTimeout = 5 }
        harness.begin(tokens: 3)
        harness.apply(harness.engine.stop(.interrupted, message: nil, hint: nil, now: 0))
        #expect(harness.goAways == [1], "the first stop waits for the answers in flight")
        #expect(!harness.closes.contains(1))
        harness.now = 1
        harness.apply(harness.engine.stop(.interrupted, message: nil, hint: nil, now: harness.now))
        #expect(harness.closes == [1], "the second stops waiting")
        harness.now = 10
        harness.apply(harness.engine.tick(now: harness.now))
        #expect(harness.closes == [1], "the passed deadline closes nothing a second time")
        harness.apply(harness.engine.connectionClosed(1, now: harness.now))
        let summary = harness.finished
        #expect(summary?.stoppedBy == .interrupted)
        #expect(summary?.unanswered == 3, "sent without an answer: left in the journal")
        #expect(summary?.results == 0 && harness.records.isEmpty, "nothing made final, nothing resent")
    }

    @Test func aConnectionToldToCloseIsClosedOnceAndItsGoAwayStillDecidesWhatWasInFlight() {
        var harness = Harness()
        harness.begin(tokens: 4)  // streams 1, 3, 5, 7
        harness.apply(harness.engine.goAway(1, lastStreamID: 3, now: 0))
        harness.apply(harness.engine.stop(.interrupted, message: nil, hint: nil, now: 0))
        harness.apply(harness.engine.stop(.interrupted, message: nil, hint: nil, now: 0))
        #expect(harness.closes.filter { $0 == 1 } == [1], "told to close once")
        harness.apply(harness.engine.tick(now: 20))
        harness.apply(harness.engine.tick(now: 40))
        #expect(harness.closes.filter { $0 == 1 } == [1], "and not again at every tick")
        harness.apply(harness.engine.connectionClosed(1, now: 40))
        let processed = harness.records.filter { $0.error == .unansweredAfterGoAway }.map(\.line).sorted()
        #expect(processed == [1, 2], "at or below the last stream: processed, not lost")
        #expect(harness.finished?.neverSent == 2, "above it: not processed, left for the resume")
    }

    @Test func aReadErrorSendsTheLinesReadAndEndsTheRunAsStopped() {
        var harness = Harness()
        harness.begin(tokens: 3, finishedInput: false)
        harness.engine.inputFailed("Input/output error")
        harness.apply(harness.engine.tokens([], finished: true, now: harness.now))
        #expect(harness.finished == nil, "the lines in flight are still awaited")
        for send in harness.opened { harness.answer(send) }
        let summary = harness.finished
        #expect(summary?.accepted == 3, "what was read is sent")
        #expect(summary?.stoppedBy == .inputFailed, "the stop names the input, not the results")
        #expect(summary?.stopMessage?.contains("Input/output error") == true)
    }

    @Test func aReadErrorNeverReplacesAStopAlreadyDecided() {
        var harness = Harness()
        harness.begin(tokens: 2, finishedInput: false)
        harness.answer(harness.opened[0], status: 403, reason: "InvalidProviderToken")
        harness.engine.inputFailed("Input/output error")
        harness.answer(harness.opened[1])
        #expect(harness.finished?.stoppedBy == .credentialRejected)
        #expect(harness.finished?.stopReason == "InvalidProviderToken")
    }
}
