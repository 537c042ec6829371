import CredentialFormats
import Foundation
import PushBulk

/// `results summary` for people: the run, its totals, each file's state with the command that
/// continues it, what is left to send, and the warnings.
enum RunSummaryText {
    static func render(_ summary: RunSummary, files: [String], program: String?, style: TerminalStyle) -> String {
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        var lines: [String] = []
        if let run = summary.run {
            var what =
                "\(run.pushType) to \(Untrusted.display(run.topic ?? "the credential's topic")) via \(run.gateway)"
            if let environment = run.environment { what += " (\(environment))" }
            if let shards = run.shards { what += ", \(shards) shards" }
            lines.append("run:        " + what)
        }
        let totals = summary.totals
        let headline =
            "\(count(totals.accepted)) accepted, \(count(totals.rejectedTotal)) rejected, \(count(totals.failedTotal + totals.outcomeUnknown)) without a final answer, \(count(totals.malformed)) malformed of \(count(totals.results)) results"
        lines.append(
            style.paint(summary.isComplete ? "✓ " : "✗ ", summary.isComplete ? .green : .red, .bold) + headline
        )
        if !totals.rejected.isEmpty { lines.append("  rejected:   " + counted(totals.rejected)) }
        if !totals.failed.isEmpty { lines.append("  failed:     " + counted(totals.failed)) }
        if totals.uncertain > 0 || totals.outcomeUnknown > 0 {
            lines.append(
                "  uncertain:  \(count(totals.uncertain)) (an answer was lost: the device may have it twice) · outcome unknown: \(count(totals.outcomeUnknown)) (in flight when a run stopped; not sent again)"
            )
        }
        lines.append("files:")
        for file in summary.files { lines += fileLines(file, program: program, count: count) }
        let left = summary.leftToSend
        if !left.isEmpty {
            lines.append(style.paint("left to send:", .bold))
            if left.unfinishedFiles > 0 {
                let files =
                    left.unfinishedFiles == 1 ? "1 unfinished file" : "\(count(left.unfinishedFiles)) unfinished files"
                lines.append(
                    "  \(files) (\(count(left.inFlight)) in flight when stopped): continue each with its command above; the rest of its tokens is sent then."
                )
            }
            if left.shardsNotGiven > 0 {
                let shards = left.shardsNotGiven == 1 ? "1 shard" : "\(count(left.shardsNotGiven)) shards"
                lines.append("  \(shards) not given: summarize with the results files of every shard.")
            }
            if left.withoutFinalAnswer > 0 {
                let list = ([program ?? "apnsctl", "results", "tokens"] + files + ["--unanswered"]).map(
                    ErrorHints.shellQuoted
                )
                .joined(separator: " ")
                lines.append(
                    "  \(count(left.withoutFinalAnswer)) lines without a final answer (a resume skips them); for a new run: \(list) > again.txt"
                )
            }
        }
        for warning in summary.warnings {
            let about = warning.path.map { Untrusted.display($0) + ": " } ?? ""
            lines.append(style.paint("warning: ", .yellow, .bold) + about + warning.message)
        }
        return lines.joined(separator: "\n")
    }

    /// A file's line, and the command that continues it when it is not finished.
    private static func fileLines(
        _ file: RunSummary.FileReport,
        program: String?,
        count: (Int) -> String
    ) -> [String] {
        var state = file.state.rawValue.replacingOccurrences(of: "_", with: " ")
        if let cause = file.stopCause {
            state += " (\(cause)\(file.stopReason.map { ": \(Untrusted.display($0))" } ?? ""))"
        }
        if let writer = file.writer { state += " by \(writer)" }
        var text = "  \(Untrusted.display(file.path))"
        if let shard = file.shard { text += "  shard \(shard)" }
        text += "  \(state)  \(count(file.outcomes.results)) results"
        if !file.isFinished, file.inFlight > 0 { text += ", \(count(file.inFlight)) in flight" }
        var lines = [text]
        lines += ResumeCommand(program: program, continuation: file.continuation).render().map { "    " + $0 }
        if file.state == .journalMissing {
            lines.append(
                "    its journal is missing: put it back beside the file, or add --resume-without-journal, knowing that what was in flight may be delivered twice."
            )
        }
        return lines
    }

    private static func counted(_ counts: [String: Int]) -> String {
        counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\(Untrusted.display($0.key)) \($0.value.formatted(.number.grouping(.automatic)))" }
            .joined(separator: ", ")
    }
}

/// `results summary --json`: the summary, with the command that continues each unfinished file.
struct RunSummaryOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var run: RunSummary.Run?
    var totals: RunSummary.Outcomes
    var leftToSend: RunSummary.LeftToSend
    var complete: Bool
    var files: [File]
    var warnings: [RunSummary.Warning]

    struct File: Encodable {
        var report: RunSummary.FileReport
        var resumeCommand: String?
        func encode(to encoder: any Encoder) throws {
            try report.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encodeIfPresent(resumeCommand, forKey: .resumeCommand)
        }
        enum Keys: String, CodingKey { case resumeCommand }
    }

    init(_ summary: RunSummary, program: String?) {
        run = summary.run
        totals = summary.totals
        leftToSend = summary.leftToSend
        complete = summary.isComplete
        files = summary.files.map {
            File(report: $0, resumeCommand: ResumeCommand(program: program, continuation: $0.continuation).line)
        }
        warnings = summary.warnings
    }
}
