import Foundation
import PushBulk
import Testing

/// `InvalidProviderToken` in a bulk run: a token from a source that can give another is
/// replaced once, and the lines it was refused for are sent again.
@Suite struct BulkEngineProviderTokenTests {
    typealias Harness = BulkEngineTests.Harness

    var refreshes: (Harness) -> Int = { harness in
        harness.actions.filter { $0 == .refreshProviderToken }.count
    }

    @Test func aRefusedSharedTokenIsReplacedOnceAndEveryRefusedLineIsSentAgainNotUncertain() {
        var harness = Harness { $0.refreshesProviderToken = true }
        harness.begin(tokens: 3)
        let first = harness.opened
        #expect(first.count == 3)
        harness.answer(first[0], status: 403, reason: "InvalidProviderToken")
        #expect(refreshes(harness) == 1, "the driver is asked for another token")
        #expect(harness.engine.summary.stoppedBy == nil)
        #expect(harness.cleared == [1], "not delivered: its journal entry is void")
        // The other two were sent with the same token: refused too, no second refresh.
        harness.answer(first[1], status: 403, reason: "InvalidProviderToken")
        harness.answer(first[2], status: 403, reason: "InvalidProviderToken")
        #expect(refreshes(harness) == 1)
        #expect(harness.engine.summary.stoppedBy == nil)
        harness.apply(harness.engine.fill(now: harness.now))
        #expect(harness.opened.count == 3, "nothing is sent while the token is being replaced")

        harness.apply(harness.engine.providerTokenRefreshed(failure: nil, now: harness.now))
        let again = Array(harness.opened.dropFirst(3))
        #expect(again.map(\.line).sorted() == [1, 2, 3])
        #expect(again.allSatisfy { $0.attempt == 2 })
        for send in again { harness.answer(send) }
        #expect(harness.finished?.accepted == 3)
        #expect(harness.finished?.stoppedBy == nil)
        #expect(harness.finished?.uncertain == 0)
        #expect(harness.records.allSatisfy { $0.status == 200 && !$0.uncertain })
    }

    @Test func aRefusalOfTheNewTokenStopsTheRunAsBefore() {
        var harness = Harness { $0.refreshesProviderToken = true }
        harness.begin(tokens: 2)
        harness.answer(harness.opened[0], status: 403, reason: "InvalidProviderToken")
        harness.answer(harness.opened[1], status: 403, reason: "InvalidProviderToken")
        harness.apply(harness.engine.providerTokenRefreshed(failure: nil, now: harness.now))
        let again = Array(harness.opened.dropFirst(2))
        #expect(again.count == 2)
        harness.answer(again[0], status: 403, reason: "InvalidProviderToken")
        #expect(refreshes(harness) == 1, "one new token per run, not one per refusal")
        #expect(harness.engine.summary.stoppedBy == .credentialRejected)
        #expect(harness.engine.summary.stopReason == "InvalidProviderToken")
        harness.answer(again[1], status: 403, reason: "InvalidProviderToken")
        #expect(harness.records.isEmpty, "the stopped lines are not final: a resumed run sends them")
        #expect(harness.finished?.unfinished == 2)
    }

    @Test func aTokenThatCannotBeReplacedStopsTheRunAndLeavesTheLinesForResume() {
        var harness = Harness { $0.refreshesProviderToken = true }
        harness.begin(tokens: 2)
        harness.answer(harness.opened[0], status: 403, reason: "InvalidProviderToken")
        harness.answer(harness.opened[1])
        harness.apply(
            harness.engine.providerTokenRefreshed(failure: "the store cannot be reached.", now: harness.now)
        )
        #expect(harness.finished?.stoppedBy == .credentialRejected)
        let message = harness.finished?.stopMessage ?? ""
        #expect(message.contains("InvalidProviderToken") && message.contains("the store cannot be reached"))
        #expect(harness.records.map(\.line) == [2])
        #expect(harness.finished?.unfinished == 1)
        #expect(harness.opened.count == 2, "nothing was sent after the refusal")
    }

    @Test func aTokenSignedHereIsNeverRefreshedAndItsRefusalStopsTheRun() {
        var harness = Harness()
        harness.begin(tokens: 2)
        harness.answer(harness.opened[0], status: 403, reason: "InvalidProviderToken")
        #expect(refreshes(harness) == 0)
        #expect(harness.engine.summary.stoppedBy == .credentialRejected)
    }
}
