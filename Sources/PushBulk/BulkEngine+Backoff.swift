import Foundation
import PushCore

extension BulkEngine {
    /// How hard the run pushes a server that loses answers: the streams in flight per connection
    /// (a window cut in half at a loss and grown back by one stream per window's worth of
    /// answers, AIMD as TCP's congestion avoidance does it), the deadline of a request (doubled
    /// when answers come later than it), and the connections closed in a row before answering
    /// anything.
    ///
    /// A loss reduces the window once per round: the losses of sends made before the last
    /// reduction (``recoveredAfter``) belong to the round already answered, so a thousand
    /// streams lost with one connection halve the window once, not a thousand times. No clock is
    /// read: rounds are told by send numbers.
    struct Backoff {
        /// Streams in flight per connection this side allows itself, beside the server's limit.
        var window: Int
        /// Answers since the window last grew: at a window's worth, it grows by one.
        var answersTowardGrowth = 0
        /// Sends numbered up to this were made before the last reduction of ``window``.
        var recoveredAfter: SendID = 0
        /// How long a request waits for its answer now.
        var deadline: Double
        /// Connections the server closed in a row, each with streams in flight and before
        /// answering any.
        var closedUnansweredInARow = 0

        init(configuration: Configuration) {
            window = max(1, configuration.maxInFlightPerConnection)
            deadline = configuration.requestTimeout
        }
    }

    /// Streams a connection may have in flight now: the server's limit, this side's cap and the
    /// window, whichever is least.
    func inFlightLimit(serverLimit: Int?) -> Int {
        min(
            serverLimit ?? configuration.maxInFlightPerConnection,
            configuration.maxInFlightPerConnection,
            max(1, backoff.window)
        )
    }

    /// An answer came: the window grows back by one stream per window's worth of answers.
    mutating func answerReturned(on id: ConnectionID) {
        connections[id]?.answeredAny = true
        backoff.closedUnansweredInARow = 0
        guard backoff.window < configuration.maxInFlightPerConnection else { return }
        backoff.answersTowardGrowth += 1
        if backoff.answersTowardGrowth >= backoff.window {
            backoff.answersTowardGrowth = 0
            backoff.window += 1
        }
    }

    /// The answer of send `sendID` was lost (timeout, reset, connection lost in flight) on a
    /// connection whose server allowed `serverLimit` streams: the window is halved.
    mutating func answerLost(_ sendID: SendID, serverLimit: Int?, code: BulkResultCode) {
        summary.lostAnswers[code.rawValue, default: 0] += 1
        reduceWindow(after: sendID, serverLimit: serverLimit)
    }

    /// Halves the window (at least one stream), once per round: only for a send made after the
    /// last reduction.
    mutating func reduceWindow(after sendID: SendID, serverLimit: Int?) {
        guard sendID > backoff.recoveredAfter else { return }
        let current = inFlightLimit(serverLimit: serverLimit)
        backoff.window = max(1, current / 2)
        backoff.answersTowardGrowth = 0
        backoff.recoveredAfter = nextSendID - 1
        summary.inFlightReductions += 1
        summary.fewestInFlight = min(summary.fewestInFlight ?? Int.max, backoff.window)
    }

    /// Requests reached the deadline, the newest of them send `sendID`, on a connection whose
    /// server allowed `serverLimit` streams. Late answers are answered by waiting longer, not by
    /// copies: while the deadline is below ``Configuration/requestTimeoutGrowth`` times
    /// ``Configuration/requestTimeout`` it doubles, the requests wait on (true), and the window is
    /// halved (once per round) so that a server slow to answer is given less at once. At the cap
    /// the requests are given up (false).
    mutating func waitLonger(_ sendID: SendID, serverLimit: Int?) -> Bool {
        let cap = configuration.requestTimeout * max(1, configuration.requestTimeoutGrowth)
        guard backoff.deadline < cap else { return false }
        backoff.deadline = min(cap, backoff.deadline * 2)
        summary.requestTimeoutGrownTo = backoff.deadline
        reduceWindow(after: sendID, serverLimit: serverLimit)
        return true
    }

    /// The server closed connection `connection` without GOAWAY while it had streams in
    /// flight. When it answered none of them, and the one before did the same, the run stops:
    /// sending more would only burn every notification's attempts on a server that loses them.
    mutating func closedWhileSending(_ connection: Connection, now: Double, into actions: inout [Action]) {
        guard connection.state == .ready, connection.inFlight.values.contains(where: { $0.streamID != nil }) else {
            return
        }
        guard !connection.answeredAny else {
            backoff.closedUnansweredInARow = 0
            return
        }
        backoff.closedUnansweredInARow += 1
        guard backoff.closedUnansweredInARow >= configuration.closedUnansweredLimit, !stopping else { return }
        let inFlight = connection.inFlight.count
        stop(
            .closedBeforeAnswering,
            message:
                "The server closed \(backoff.closedUnansweredInARow) connections in a row before answering anything (the last with \(inFlight) notifications in flight); nothing more is sent.",
            hint:
                "Check that the gateway, and any proxy or load balancer before it, is healthy and takes this many streams at once; then continue the run.",
            now: now,
            into: &actions
        )
    }

    /// Why a lost answer's notification is not sent again, when the run does not resend.
    var notResentBecause: String {
        BulkDelivery.secondDelivery(configuration.pushType) == .actsTwice
            ? "Not sent again: a second delivery of a \(configuration.pushType) notification would act twice on the device."
            : "Not sent again: the run sends each notification at most once."
    }
}
