import Foundation
import PushCore

extension BulkEngine {
    // MARK: Outcomes

    mutating func finalAnswer(_ item: Item, _ response: PushResponse, into actions: inout [Action]) {
        if response.isAccepted {
            summary.accepted += 1
            progress.accepted += 1
        } else {
            summary.rejected[response.reason?.rawValue ?? "HTTP \(response.status)", default: 0] += 1
            progress.rejected += 1
        }
        if item.attempts > 1 { summary.retried += 1 }
        if item.uncertain { summary.uncertain += 1 }
        record(
            BulkResult(
                line: item.line,
                token: item.token,
                status: response.status,
                reason: response.reason,
                apnsID: item.apnsID,
                attempts: item.attempts,
                uncertain: item.uncertain,
                timestamp: response.timestamp,
                uncertainBecause: item.uncertainBecause
            ),
            into: &actions
        )
    }

    mutating func finalFailure(
        _ item: Item,
        code: BulkResultCode,
        message: String,
        uncertain: Bool,
        into actions: inout [Action]
    ) {
        summary.failed += 1
        progress.failed += 1
        if item.attempts > 1 { summary.retried += 1 }
        if uncertain { summary.uncertain += 1 }
        record(
            BulkResult(
                line: item.line,
                token: item.token,
                apnsID: item.apnsID,
                attempts: item.attempts,
                uncertain: uncertain,
                error: code,
                message: message,
                uncertainBecause: uncertain ? (item.uncertainBecause ?? code) : nil
            ),
            into: &actions
        )
    }

    mutating func record(_ result: BulkResult, into actions: inout [Action]) {
        summary.results += 1
        progress.finished += 1
        actions.append(.record(result))
    }

    /// The server did not process it: safe to send again, and not uncertain.
    mutating func notProcessed(_ item: Item, now: Double, into actions: inout [Action]) {
        var item = item
        clearJournal(&item, into: &actions)
        if stopping {
            leaveUnfinished(item)
        } else if item.attempts < configuration.maxAttempts {
            ready.append(item)
        } else {
            finalFailure(
                item,
                code: .notProcessed,
                message: "The server did not process it in \(item.attempts) sends (the most allowed).",
                uncertain: item.uncertain,
                into: &actions
            )
        }
    }

    /// The answer of send `sendID` was lost: the server may have delivered it. Sent again and
    /// marked, unless the run sends at most once (then its result says so); either way the
    /// streams in flight are reduced.
    mutating func lost(
        _ item: Item,
        sendID: SendID,
        serverLimit: Int?,
        code: BulkResultCode,
        message: String,
        now: Double,
        into actions: inout [Action]
    ) {
        var item = item
        item.uncertain = true
        item.uncertainBecause = code
        answerLost(sendID, serverLimit: serverLimit, code: code)
        if stopping {
            // Its journal entry stays: a resumed run reports it as outcome_unknown, or sends it
            // again, by the run's policy.
            leaveUnfinished(item)
        } else if !configuration.resendLostAnswers {
            finalFailure(item, code: code, message: message + " " + notResentBecause, uncertain: true, into: &actions)
        } else if item.attempts < configuration.maxAttempts {
            ready.append(item)
        } else {
            finalFailure(item, code: code, message: message, uncertain: true, into: &actions)
        }
    }

    /// At or below GOAWAY's last-stream-id: the server says it processed it, but the answer
    /// never came. Not sent again.
    mutating func unansweredAfterGoAway(_ item: Item, into actions: inout [Action]) {
        finalFailure(
            item,
            code: .unansweredAfterGoAway,
            message: "The server processed it (GOAWAY said so) but its answer never came.",
            uncertain: true,
            into: &actions
        )
    }

    mutating func countUnansweredReset(_ id: ConnectionID, now: Double, into actions: inout [Action]) {
        guard var connection = connections[id] else { return }
        if now - connection.resetWindowStart >= 1 {
            connection.resetWindowStart = now
            connection.resetsInWindow = 0
        }
        connection.resetsInWindow += 1
        connections[id] = connection
        if connection.resetsInWindow > configuration.unansweredResetsPerSecond, connection.takesNewStreams {
            goAwayAndDrain(id, now: now, into: &actions)
        }
    }
}

extension BulkEngine {
    /// Results could not be written: nothing more is sent; what is in flight is in the journal.
    public mutating func outputFailed(
        _ message: String,
        remedy: String = AppendFile.remedy(for: nil),
        now: Double
    ) -> [Action] {
        var actions: [Action] = []
        stop(
            .outputFailed,
            message:
                "The results cannot be written (\(message)); nothing more is sent.",
            hint: remedy,
            now: now,
            into: &actions
        )
        checkFinished(now: now, into: &actions)
        return actions
    }
}
