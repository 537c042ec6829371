import NIOCore
import NIOHTTP2
import Testing

@testable import LocalGateway

/// The connection's state machine on its own: events in, what the handler must do out. No
/// channel, no socket; time only where a flood budget reads it.
@Suite struct GatewayConnectionStateTests {
    typealias State = GatewayConnectionState

    func machine(
        _ identity: ClientIdentity = .tokens,
        _ change: (inout State.Rules) -> Void = { _ in }
    ) -> State {
        var rules = State.Rules()
        change(&rules)
        return State(identity: identity, rules: rules)
    }

    /// Opens and completes `ids`, each processed.
    func process(_ ids: [Int], on state: inout State) {
        for id in ids {
            #expect(state.streamOpened(HTTP2StreamID(id), batchLimit: .max) == .read)
            #expect(state.requestComplete(HTTP2StreamID(id)) == .process)
        }
    }

    @Test func aConnectionAwaitingATokenStartsAtOneStreamAndRisesOnceOneIsAccepted() {
        var state = machine(.awaitingToken)
        #expect(state.initialLimit == 1)
        process([1], on: &state)
        let answer = state.answering(status: 200, tokenAccepted: true, inReadBatch: false)
        #expect(answer == .init(settings: 1000, goAway: .none, close: false))
        #expect(state.identity.isAwaitingToken == false)
        process([3], on: &state)
        #expect(state.answering(status: 200, tokenAccepted: true, inReadBatch: false).settings == nil)
    }

    @Test func aConnectionNotAwaitingATokenStartsAtTheConfiguredLimit() {
        #expect(machine(.tokens) { $0.maxConcurrentStreams = 300 }.initialLimit == 300)
        #expect(ClientIdentity(certificate: nil, demandsToken: true).isAwaitingToken)
        #expect(!ClientIdentity(certificate: nil, demandsToken: false).isAwaitingToken)
    }

    @Test func aRejectionLowersTheLimitUntilANotificationIsAccepted() {
        var state = machine()
        process([1, 3, 5, 7], on: &state)
        #expect(state.answering(status: 400, tokenAccepted: false, inReadBatch: false).settings == 1)
        #expect(state.answering(status: 403, tokenAccepted: false, inReadBatch: false).settings == nil)
        // A 5xx neither lowers nor restores it.
        #expect(state.answering(status: 503, tokenAccepted: false, inReadBatch: false).settings == nil)
        #expect(state.answering(status: 200, tokenAccepted: false, inReadBatch: false).settings == 1000)
    }

    @Test func withoutTheRejectionDynamicTheLimitStays() {
        var state = machine { $0.singleStreamAfterRejection = false }
        process([1], on: &state)
        #expect(state.answering(status: 400, tokenAccepted: false, inReadBatch: false).settings == nil)
    }

    @Test func theChangeFaultSetsTheLimitOnceAfterItsAcceptedCount() {
        var state = machine { $0.changeMaxConcurrentStreams = (afterAccepted: 2, to: 5) }
        process([1, 3, 5], on: &state)
        #expect(state.answering(status: 200, tokenAccepted: false, inReadBatch: false).settings == nil)
        #expect(state.answering(status: 200, tokenAccepted: false, inReadBatch: false).settings == 5)
        #expect(state.answering(status: 200, tokenAccepted: false, inReadBatch: false).settings == nil)
        #expect(state.limitChanged)
    }

    /// SETTINGS are acknowledged in order: each acknowledgement puts the oldest one in force.
    @Test func acknowledgementsPutTheLimitsInForceInOrder() {
        var state = machine(.awaitingToken)
        process([1, 3], on: &state)
        _ = state.answering(status: 200, tokenAccepted: true, inReadBatch: false)  // 1000
        _ = state.answering(status: 400, tokenAccepted: false, inReadBatch: false)  // 1
        #expect(state.limits.advertised == 1)
        state.settingsAcknowledged()
        #expect(state.limits.acknowledged == 1)  // the first SETTINGS
        state.settingsAcknowledged()
        #expect(state.limits.acknowledged == 1000)
        state.settingsAcknowledged()
        #expect(state.limits.acknowledged == 1)
        state.settingsAcknowledged()  // one too many: nothing pending
        #expect(state.limits.acknowledged == 1)
    }

    @Test func streamsAboveTheBatchLimitAreRefusedAndTooManyRefusalsCalm() {
        var state = machine()
        #expect(state.streamOpened(1, batchLimit: 1) == .read)
        // Before any acknowledgement a client may be refused 200 streams.
        for id in stride(from: 3, through: 401, by: 2) {
            #expect(state.streamOpened(HTTP2StreamID(id), batchLimit: 1) == .refuse(calm: .none))
        }
        #expect(state.refusedSinceAcknowledgement == 200)
        #expect(state.streamOpened(403, batchLimit: 1) == .refuse(calm: .sendGoAway(lastStreamID: .rootStream)))
        #expect(state.isCalmed)
        #expect(state.openStreams == 202)
    }

    @Test func anAcknowledgementStartsTheRefusalCountAgain() {
        var state = machine()
        _ = state.streamOpened(1, batchLimit: 0)
        state.settingsAcknowledged()
        #expect(state.refusedSinceAcknowledgement == 0)
        #expect(state.everAcknowledged)
    }

    @Test func theCloseFaultCutsOnTheStreamAfterItsCount() {
        var state = machine { $0.closeAfterStreams = 2 }
        #expect(state.streamOpened(1, batchLimit: .max) == .read)
        #expect(state.streamOpened(3, batchLimit: .max) == .read)
        #expect(state.streamOpened(5, batchLimit: .max) == .closeConnection)
    }

    /// GOAWAY names the highest stream processed, refuses the open streams above it whose
    /// request is still arriving, and the close comes once the last processed one is answered.
    @Test func shutdownDrainsThenLingers() {
        var state = machine()
        process([1, 3], on: &state)
        #expect(state.streamOpened(5, batchLimit: .max) == .read)
        #expect(state.streamOpened(7, batchLimit: .max) == .read)
        let goAway = State.GoAway(lastStreamID: 3, reason: "Shutdown", refused: [5, 7], thenClose: false)
        #expect(state.shutdown() == .send(goAway))
        #expect(state.lifecycle == .draining(lastStreamID: 3, unsent: nil))
        #expect(state.shutdown() == .none)
        #expect(state.requestComplete(5) == .refuse)
        #expect(state.answering(status: 200, tokenAccepted: false, inReadBatch: false).close == false)
        #expect(state.answering(status: 200, tokenAccepted: false, inReadBatch: false).close == true)
        #expect(state.lifecycle == .lingering(lastStreamID: 3))
    }

    /// Streams at or below the last one whose request completes after the GOAWAY are answered,
    /// but no SETTINGS goes out once the connection is closing.
    @Test func aLingeringConnectionAnswersItsLastRequestsWithoutNewLimits() {
        var state = machine()
        #expect(state.streamOpened(1, batchLimit: .max) == .read)
        process([3], on: &state)
        #expect(state.shutdown() == .send(.init(lastStreamID: 3, reason: "Shutdown", refused: [], thenClose: false)))
        #expect(state.answering(status: 200, tokenAccepted: false, inReadBatch: false).close)
        #expect(state.requestComplete(1) == .process)
        #expect(
            state.answering(status: 400, tokenAccepted: false, inReadBatch: false)
                == .init(settings: nil, goAway: .none, close: false)
        )
    }

    /// The goaway fault within a batch of reads: the last stream is fixed at once, the frame
    /// waits for the batch's end.
    @Test func aGoAwayDecidedInABatchGoesOutWhenItEnds() {
        var state = machine { $0.goAwayAfterStreams = 1 }
        process([1], on: &state)
        #expect(state.streamOpened(3, batchLimit: .max) == .read)
        #expect(state.streamOpened(5, batchLimit: .max) == .read)
        let answer = state.answering(status: 200, tokenAccepted: false, inReadBatch: true)
        #expect(answer == .init(settings: nil, goAway: .deferred, close: false))
        #expect(state.lifecycle == .draining(lastStreamID: 1, unsent: "Shutdown"))
        #expect(state.requestComplete(3) == .refuse)
        let goAway = state.readBatchEnded(closedStreams: 1)
        #expect(goAway == .init(lastStreamID: 1, reason: "Shutdown", refused: [5], thenClose: true))
        #expect(state.lifecycle == .lingering(lastStreamID: 1))
        #expect(state.openStreams == 2)
        #expect(state.readBatchEnded(closedStreams: 0) == nil)
    }

    @Test func anIdleConnectionGoesAwayOnlyWhenNothingIsInFlight() {
        var state = machine()
        process([1], on: &state)
        #expect(state.idleTimedOut() == .none)  // open, and its answer awaited
        state.streamClosed(1, countNow: true)
        #expect(state.idleTimedOut() == .none)  // its answer still awaited
        #expect(state.answerAbandoned() == false)
        let goAway = State.GoAway(lastStreamID: 1, reason: "IdleTimeout", refused: [], thenClose: true)
        #expect(state.idleTimedOut() == .send(goAway))
        #expect(state.idleTimedOut() == .none)
    }

    @Test func aRequestLeftHalfSentDoesNotHoldOffTheIdleTimeout() {
        var state = machine()
        #expect(state.streamOpened(1, batchLimit: .max) == .read)  // its body never comes
        let goAway = State.GoAway(lastStreamID: .rootStream, reason: "IdleTimeout", refused: [1], thenClose: true)
        #expect(state.idleTimedOut() == .send(goAway), "refused unprocessed, and the connection closed")
    }

    @Test func aControlFrameFloodCalmsOnceAndStopsEverything() {
        var state = machine()
        process([1, 3], on: &state)
        let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        for _ in 0..<ConnectionBounds.maxControlFramesPerWindow {
            #expect(state.controlFrameReceived(at: now) == .none)
        }
        #expect(state.controlFrameReceived(at: now) == .sendGoAway(lastStreamID: 3))
        #expect(state.isCalmed)
        #expect(state.controlFrameReceived(at: now) == .none)
        #expect(state.earlyReset(at: now) == .none)
        #expect(state.shutdown() == .none)
        #expect(state.requestComplete(5) == .ignore)
        // Answers already decided still go out, without SETTINGS.
        #expect(state.answering(status: 400, tokenAccepted: false, inReadBatch: false).settings == nil)
    }

    @Test func theBudgetWindowStartsAgain() {
        var state = machine()
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        for _ in 0..<ConnectionBounds.maxEarlyResetsPerWindow { _ = state.earlyReset(at: now) }
        now = now + ConnectionBounds.floodWindow + .nanoseconds(1)
        #expect(state.earlyReset(at: now) == .none)
        #expect(!state.isCalmed)
    }

    @Test func aCutConnectionProcessesAndSaysNothingMore() {
        var state = machine()
        process([1, 3], on: &state)
        state.answerCut()
        #expect(state.lifecycle == .cut)
        #expect(state.requestComplete(5) == .ignore)
        #expect(state.shutdown() == .none)
        #expect(state.calm() == .none)
        #expect(state.answerAbandoned() == false)
    }

    @Test func aClosedConnectionForgetsItsStreams() {
        var state = machine()
        process([1], on: &state)
        _ = state.streamOpened(3, batchLimit: .max)
        state.closed(openStreams: 2)
        #expect(state.lifecycle == .closed)
        #expect(state.openStreams == 0)
        #expect(state.unprocessed.isEmpty)
        #expect(state.shutdown() == .none)
        #expect(state.answerAbandoned() == false)
    }

    /// A value: a copy changes on its own.
    @Test func aCopyIsIndependent() {
        var state = machine()
        process([1], on: &state)
        let copy = state
        _ = state.shutdown()
        #expect(copy.lifecycle == .open)
        #expect(state.lifecycle != .open)
    }
}
