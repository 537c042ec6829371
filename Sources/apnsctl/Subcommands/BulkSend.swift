import ArgumentParser
import CredentialFormats
import Dispatch
import Foundation
import PushBulk
import PushGateway
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `apnsctl send CREDENTIAL --tokens FILE`: one notification to every token of a file.
extension Send {
    func runBulk(tokensPath: String) async throws {
        let style = TerminalStyle.stderr
        var options = BulkEngine.Configuration()
        options.connections = connections
        options.maxAttempts = maxAttempts
        let display = BulkDisplay(quiet: quiet, style: style)
        let chosen = try shard.map { try ShardOption.resolve($0) }
        if let chosen, let variable = chosen.variable, !quiet {
            printError(
                style.paint("note: ", .bold)
                    + "sending shard \(chosen.shard) of the list: K = \(chosen.shard.k) from \(variable)."
            )
        }
        let outcome = try await withUserErrors {
            // A placeholder token: the template's own token is never sent.
            let prepared = try await prepare(token: try DeviceToken(bytes: [0]), quietNotes: quiet)
            let request = BulkSendJob.Request(
                configuration: prepared.plan.configuration,
                template: prepared.notification.template,
                tokens: tokensPath,
                results: results,
                resume: resume,
                options: options,
                allowDuplicates: allowDuplicates,
                resumeWithoutJournal: resumeWithoutJournal,
                parameters: recordedParameters(environment: prepared.plan.environment),
                resendUncertain: resendPolicy,
                shard: chosen?.shard
            )
            return try await BulkSendJob.run(request, observer: display)
        }
        let summary = outcome.summary
        let command = ResumeCommand(program: CommandLine.arguments.first, continuation: outcome.continuation)
        if json, outcome.resultsPath != nil {
            try printJSON(BulkSummaryOutput(results: outcome.resultsPath, summary: summary))
        } else if !quiet {
            printError(
                render(
                    summary,
                    resultsPath: outcome.resultsPath,
                    resume: command,
                    resends: outcome.recorded.resendUncertain == true,
                    style: style
                )
            )
        }
        if let cause = summary.stoppedBy {
            if quiet || json {
                reportError(CommandLineError(.failed, summary.stopMessage ?? "the run stopped early"), style: style)
            }
            throw cause == .interrupted && summary.resultsWritten == summary.results && !summary.resultsLost
                ? ExitCode(130) : ExitStatus.couldNotCheck
        }
        if summary.accepted < summary.results { throw ExitStatus.problem }
    }

    /// What the stop left, in numbers that add up: results written, answers whose result was
    /// lost with a failed write, sends without an answer, and lines never sent.
    private func stopAccount(_ summary: BulkSummary, resultsPath: String?, resends: Bool) -> [String] {
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        guard let resultsPath else {
            return [
                "\(count(summary.results)) results printed; \(count(summary.unanswered)) sent without an answer; \(count(summary.neverSent)) read and never sent. Without --results this run cannot be resumed."
            ]
        }
        if summary.resultsLost {
            return [
                "\(count(summary.results)) lines were answered and \(count(summary.unanswered)) sent without an answer; their results are lost with the file."
            ]
        }
        var parts = ["\(count(summary.resultsWritten)) results written to \(resultsPath)"]
        let lost = summary.results - summary.resultsWritten
        if lost > 0 {
            parts.append(
                "\(count(lost)) answered whose results could not be written"
                    + (resends
                        ? " (sent again on resume, with the same apns-id and collapse ID)"
                        : " (outcome_unknown on resume: not sent again)")
            )
        }
        parts.append(
            "\(count(summary.unanswered)) sent without an answer"
                + (resends
                    ? " (sent again on resume, with the same apns-id and collapse ID)"
                    : " (outcome_unknown on resume: not sent again)")
        )
        parts.append("\(count(summary.neverSent)) read and never sent")
        return [
            "so far: " + parts.joined(separator: "; ") + ".",
            "The resume sends the lines never sent and every line not yet read.",
        ]
    }

    private func render(
        _ summary: BulkSummary,
        resultsPath: String?,
        resume: ResumeCommand,
        resends: Bool,
        style: TerminalStyle
    ) -> String {
        var lines: [String] = []
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        let rate = count(Int(summary.rate.rounded()))
        let seconds = String(format: "%.1f", summary.seconds)
        let headline =
            "\(count(summary.accepted)) accepted, \(count(summary.rejectedTotal)) rejected, \(count(summary.failed + summary.malformed)) failed of \(count(summary.results)) in \(seconds) s (\(rate)/s)"
        let clean = summary.accepted == summary.results && summary.stoppedBy == nil
        lines.append(style.paint(clean ? "✓ " : "✗ ", clean ? .green : .red, .bold) + headline)
        if !summary.rejected.isEmpty {
            let reasons = summary.rejected.sorted { $0.value > $1.value }.map { "\($0.key) \(count($0.value))" }
            lines.append("  rejected:   " + reasons.joined(separator: ", "))
        }
        var details = [
            "retried \(count(summary.retried))", "requests \(count(summary.requests))",
            "connections \(count(summary.connections))",
        ]
        if summary.malformed > 0 { details.insert("malformed lines \(count(summary.malformed))", at: 0) }
        if summary.uncertain > 0 {
            details.insert(style.paint("uncertain \(count(summary.uncertain))", .yellow), at: 0)
        }
        if summary.skipped > 0 { details.append("skipped (already done) \(count(summary.skipped))") }
        lines.append("  " + details.joined(separator: " · "))
        if summary.uncertain > summary.outcomeUnknown {
            lines.append(
                "  uncertain: \(count(summary.uncertain - summary.outcomeUnknown)) answers were lost in flight (\"uncertain\": true in the results, and why): "
                    + (resends
                        ? "those notifications were sent again with the same apns-id and collapse ID."
                        : "they were not sent again.")
            )
        }
        lines += backoffLines(summary)
        if summary.outcomeUnknown > 0 {
            lines.append(
                "  outcome unknown: \(count(summary.outcomeUnknown)) lines were in flight when the earlier run stopped; they may have been delivered and were not sent again (\"error\": \"outcome_unknown\"; a resume with --resend-uncertain sends such lines again)."
            )
        }
        for (reason, times) in summary.goAways.sorted(by: { $0.key < $1.key }) {
            // The server's own word, with what APNs means by it when it is one of APNs' reasons.
            let known = APNsReason(rawValue: reason)
            lines.append(
                "  APNs closed the connection: \(Untrusted.display(reason))"
                    + (times > 1 ? " (\(count(times)) times)" : "")
                    + (known.isKnown
                        ? " — \(known.explanation) Reconnected and went on." : "; reconnected and went on.")
            )
        }
        if let resultsPath { lines.append("  results:    \(resultsPath)") }
        if summary.duplicates > 0 {
            lines.append(
                "  duplicates: \(count(summary.duplicates)) lines repeat a token listed earlier; each token was sent once (--allow-duplicates sends every line)."
            )
        }
        if summary.missingFromTokens > 0 {
            lines.append(
                "  missing:    \(count(summary.missingFromTokens)) tokens the earlier run had in flight are no longer in the token file; their outcome stays unknown (results with \"error\": \"outcome_unknown\" and the line they had then)."
            )
        }
        if let cause = summary.stoppedBy {
            let what = cause == .interrupted ? "interrupted" : "stopped"
            lines.append(style.paint("\(what): ", .red, .bold) + (summary.stopMessage ?? "the run stopped early"))
            lines += stopAccount(summary, resultsPath: resultsPath, resends: resends).map { "  " + $0 }
            if let hint = summary.stopHint { lines.append("  " + style.paint("→ \(hint)", .bold)) }
            if !summary.resultsLost { lines += resume.render().map { "  " + $0 } }
        }
        return lines.joined(separator: "\n")
    }
}

struct BulkSummaryOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var results: String?
    var summary: BulkSummary
    /// Why the run stopped early, as every report gives an error.
    var error: ReportedError?

    init(results: String?, summary: BulkSummary) {
        self.results = results
        self.summary = summary
        error = summary.stoppedBy.map {
            ReportedError(
                code: $0.rawValue,
                message: summary.stopMessage ?? "The run stopped early.",
                hint: summary.stopHint
            )
        }
    }
}

/// What a bulk run shows while it sends: the notes before the first send, the progress bar on
/// a terminal, and Ctrl-C (SIGINT, SIGTERM) as a stop: once waits for the answers in flight,
/// twice stops waiting, a third time exits at once.
final class BulkDisplay: BulkSendObserver, @unchecked Sendable {
    let quiet: Bool
    let style: TerminalStyle
    private var progress: ProgressBar?
    private var signals: SignalWatch?
    /// The run's sender once it exists, and whether a stop was asked before (during start-up:
    /// loading the credential, opening the files). Touched from the signal queue too.
    private let stopping = StopRequest()

    init(quiet: Bool, style: TerminalStyle) {
        self.quiet = quiet
        self.style = style
        // Watched from the start, so that SIGTERM or Ctrl-C during start-up is a stop like any
        // other (exit 130 with nothing sent), not the default death (143).
        let (quiet, stopping) = (quiet, stopping)
        signals = SignalWatch(signals: [SIGINT, SIGTERM]) { count in
            let sender = stopping.ask()
            if count >= 3 || (count >= 2 && sender == nil) { _exit(130) }
            guard let sender else {
                // Start-up may wait on something that never comes (a FIFO with no writer): if
                // the run has not begun soon, it stops here, before anything was sent.
                DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
                    guard stopping.ask() == nil else { return }
                    if !quiet {
                        printError(style.paint("stopped", .yellow, .bold) + " during start-up; nothing was sent.")
                    }
                    _exit(130)
                }
                return
            }
            if count == 1, !quiet {
                // Clearing the progress bar's line means something only on a terminal.
                printError(
                    (style.isTerminal ? "\r\u{1B}[2K" : "") + style.paint("stopping:", .yellow, .bold)
                        + " no new tokens; waiting for the notifications in flight (Ctrl-C again to stop waiting)"
                )
            }
            sender.stop()
        }
    }

    func willSend(_ started: BulkSendJob.Started) {
        let run = started.run
        if run.credentialChanged, !quiet {
            printError(
                style.paint("note: ", .bold)
                    + "continuing with another credential: the run stopped because APNs refused the one it used (\(run.state?.lastStop?.reason ?? "credential")); topic, push type, payload and gateway are the same."
            )
        }
        if let first = run.tokenFileChanged, !quiet {
            printError(
                style.paint("note: ", .bold)
                    + "this resume reads \(Untrusted.display(started.tokens)), not the token file the run began with (\(Untrusted.display(first))): each of its tokens that has no result yet is sent, and the tokens of \(Untrusted.display(first)) that are not in it are not sent. Resume with --tokens \(ErrorHints.shellQuoted(first)) to send those."
            )
        }
        if run.resultsPath == nil {
            // The result lines are the JSON answer: no error object may follow them.
            JSONFailure.printed = true
            if !quiet {
                printError(
                    style.paint("warning: ", .yellow, .bold)
                        + "the results go to standard output only, with no journal: if this run stops it cannot be resumed, and a new run sends every token again. Give --results FILE to make it resumable."
                )
            }
        }
        let sender = started.sender
        // A stop asked during start-up: the run stops before its first notification.
        if stopping.started(sender) { sender.stop() }
        if !quiet && style.isTerminal {
            progress = ProgressBar(sender: sender, total: started.remainingLines(), style: style)
            progress?.start()
        }
    }

    func didEnd() {
        progress?.finish()
        signals?.cancel()
    }
}

/// A stop asked by a signal, before or after the run's sender exists.
final class StopRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var sender: BulkSender?
    private var asked = false

    /// A signal asks to stop: the sender to stop, when there is one yet.
    func ask() -> BulkSender? {
        lock.withLock {
            asked = true
            return sender
        }
    }

    /// The sender exists: whether a stop was asked before it did.
    func started(_ sender: BulkSender) -> Bool {
        lock.withLock {
            self.sender = sender
            return asked
        }
    }
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
