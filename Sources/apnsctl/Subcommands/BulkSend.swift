import ArgumentParser
import Dispatch
import Foundation
import PushCredentials
import PushGateway

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `apnsctl send CREDENTIAL --tokens FILE`: one notification to every token of a file.
extension Send {
    func runBulk(tokensPath: String) async throws {
        let style = TerminalStyle.stderr
        let (sender, resultsPath, total, skipped) = try await withUserErrors { () -> (BulkSender, String?, Int?, Int) in
            // A placeholder token: the template's own token is never sent.
            let prepared = try prepare(token: try DeviceToken(bytes: [0]), quietNotes: quiet)
            let state = try resume.map { try ResumeState.load(resultsPath: $0) }
            // Everything that can be refused is checked before any file is made.
            let feed = try TokenFeed.open(path: tokensPath, resume: state)
            let resultsPath = results ?? resume
            let output: BulkOutput
            if let resultsPath {
                let file: AppendFile
                if let resume, resultsPath == resume {
                    file = try AppendFile.open(path: resultsPath, truncateTo: state?.validLength)
                } else {
                    file = try AppendFile.open(path: resultsPath, exclusive: true)
                }
                let journalPath = ResumeState.journalPath(forResults: resultsPath)
                // A new run starts a new journal; a resumed one keeps what it has.
                let journal = try AppendFile.open(path: journalPath, truncateTo: resultsPath == resume ? nil : 0)
                output = BulkOutput(results: file, journal: journal)
            } else {
                output = BulkOutput(results: .standardOutput, journal: nil)
            }
            var options = BulkSender.Options()
            options.connections = connections
            options.maxAttempts = maxAttempts
            options.resendUncertain = resendUncertain
            let sender = try BulkSender(configuration: prepared.configuration, template: prepared.notification,
                                        options: options, feed: feed, output: output)
            let showProgress = !quiet && style.isTerminal
            let total = showProgress ? TokenFeed.countEntries(path: tokensPath).map { max(0, $0 - (state?.finalCount ?? 0)) } : nil
            return (sender, resultsPath, total, state?.finalCount ?? 0)
        }

        let signals = SignalWatch(signals: [SIGINT, SIGTERM]) { count in
            if count == 1 {
                if !quiet { printError("\r\u{1B}[2K" + style.paint("stopping:", .yellow, .bold) + " no new tokens; waiting for the notifications in flight (Ctrl-C again to stop waiting)") }
                sender.stop()
            } else if count == 2 {
                sender.stop()
            } else {
                _exit(130)
            }
        }
        defer { signals.cancel() }

        let progress = (!quiet && style.isTerminal) ? ProgressBar(sender: sender, total: total, style: style) : nil
        progress?.start()
        var summary: BulkSender.Summary
        do {
            summary = try await sender.run()
        } catch let error as GatewayError {
            progress?.finish()
            error.print()
            // Nothing was sent: a new results file and its journal are not left behind to be
            // refused as "already exists" next time.
            if let resultsPath, resultsPath != resume, Self.isEmptyFile(resultsPath) {
                unlink(resultsPath)
                unlink(ResumeState.journalPath(forResults: resultsPath))
            }
            throw ExitStatus.couldNotCheck
        }
        progress?.finish()
        summary.skipped = skipped

        if json, resultsPath != nil {
            try printJSON(BulkSummaryOutput(schemaVersion: ReportSchema.schemaVersion, results: resultsPath, summary: summary))
        } else if !quiet {
            printError(render(summary, resultsPath: resultsPath, style: style))
        }
        if let cause = summary.stoppedBy {
            if quiet || json {
                printError(style.paint("error:", .red, .bold) + " " + (summary.stopMessage ?? "the run stopped early"))
            }
            throw cause == .interrupted ? ExitCode(130) : ExitStatus.couldNotCheck
        }
        if summary.accepted < summary.results { throw ExitStatus.problem }
    }

    static func isEmptyFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_size == 0
    }

    private func render(_ summary: BulkSender.Summary, resultsPath: String?, style: TerminalStyle) -> String {
        var lines: [String] = []
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        let rate = count(Int(summary.rate.rounded()))
        let seconds = String(format: "%.1f", summary.seconds)
        let headline = "\(count(summary.accepted)) accepted, \(count(summary.rejectedTotal)) rejected, \(count(summary.failed + summary.malformed)) failed of \(count(summary.results)) in \(seconds) s (\(rate)/s)"
        let clean = summary.accepted == summary.results && summary.stoppedBy == nil
        lines.append(style.paint(clean ? "✓ " : "✗ ", clean ? .green : .red, .bold) + headline)
        if !summary.rejected.isEmpty {
            let reasons = summary.rejected.sorted { $0.value > $1.value }.map { "\($0.key) \(count($0.value))" }
            lines.append("  rejected:   " + reasons.joined(separator: ", "))
        }
        var details = ["retried \(count(summary.retried))", "requests \(count(summary.requests))",
                       "connections \(count(summary.connections))"]
        if summary.malformed > 0 { details.insert("malformed lines \(count(summary.malformed))", at: 0) }
        if summary.uncertain > 0 { details.insert(style.paint("uncertain \(count(summary.uncertain))", .yellow), at: 0) }
        if summary.skipped > 0 { details.append("skipped (already done) \(count(summary.skipped))") }
        lines.append("  " + details.joined(separator: " · "))
        if summary.uncertain > 0 {
            lines.append("  uncertain: an answer was lost with its connection, so the notification was sent again and may have arrived twice (\"uncertain\": true in the results).")
        }
        if let resultsPath { lines.append("  results:    \(resultsPath)") }
        if let cause = summary.stoppedBy {
            let what = cause == .interrupted ? "interrupted" : "stopped"
            lines.append(style.paint("\(what): ", .red, .bold) + (summary.stopMessage ?? "the run stopped early")
                         + (summary.unfinished > 0 ? " (\(count(summary.unfinished)) lines left unfinished)" : ""))
            if let hint = summary.stopHint { lines.append("  " + style.paint("→ \(hint)", .bold)) }
            if let resultsPath {
                lines.append("  continue with: apnsctl send … --tokens \(tokens ?? "FILE") --resume \(resultsPath)")
            }
        }
        return lines.joined(separator: "\n")
    }
}

struct BulkSummaryOutput: Encodable {
    var schemaVersion: Int
    var results: String?
    var summary: BulkSender.Summary
}

/// Catches SIGINT/SIGTERM on a dispatch queue and counts them.
final class SignalWatch: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    private var count = 0

    init(signals: [Int32], handler: @escaping @Sendable (Int) -> Void) {
        let queue = DispatchQueue(label: "apnsctl.signals")
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                count += 1
                handler(count)
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
