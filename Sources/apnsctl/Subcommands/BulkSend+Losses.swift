import Foundation
import PushBulk

extension Send {
    /// What the run did about lost answers, in the summary: how many were lost and how (the
    /// cause), and how the sender backed off (fewer streams in flight, a longer deadline).
    func backoffLines(_ summary: BulkSummary) -> [String] {
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        var lines: [String] = []
        if !summary.lostAnswers.isEmpty {
            let words: [String: String] = [
                BulkResultCode.timeout.rawValue: "no answer by the deadline",
                BulkResultCode.connectionClosed.rawValue: "connection closed with the stream in flight",
                BulkResultCode.streamReset.rawValue: "stream reset without an answer",
            ]
            let causes = summary.lostAnswers.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }
                .map { "\(count($0.value)) \(words[$0.key] ?? $0.key) (\($0.key))" }
            lines.append("  answers lost: " + causes.joined(separator: ", ") + ".")
        }
        var backedOff: [String] = []
        if summary.inFlightReductions > 0, let fewest = summary.fewestInFlight {
            backedOff.append(
                "streams in flight halved \(count(summary.inFlightReductions)) "
                    + (summary.inFlightReductions == 1 ? "time" : "times")
                    + ", down to \(count(fewest)) per connection at the lowest, and grown back as answers returned"
            )
        }
        if let deadline = summary.requestTimeoutGrownTo {
            let seconds = deadline == deadline.rounded() ? String(Int(deadline)) : String(format: "%.1f", deadline)
            backedOff.append("the deadline of a request grew to \(seconds) s as answers came later than --timeout")
        }
        if !backedOff.isEmpty { lines.append("  backed off: " + backedOff.joined(separator: "; ") + ".") }
        return lines
    }
}
