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
            let template = prepared.notification.template
            let header = BulkRunHeader(
                credential: prepared.configuration.credential.fingerprint,
                template: template,
                gateway: prepared.configuration.endpoint.description
            )
            let state = try resume.map { try ResumeState.load(resultsPath: $0) }
            if let resume, let state { try Self.checkSameRun(state, header, resultsPath: resume) }
            // Everything that can be refused is checked before any file is made.
            let feed = try TokenFeed.open(path: tokensPath, resume: state)
            let resultsPath = results ?? resume
            let output: BulkOutput
            if let resultsPath {
                let file: AppendFile
                let continuing = resultsPath == resume
                if continuing {
                    file = try AppendFile.open(path: resultsPath, truncateTo: state?.validLength)
                } else {
                    if FileManager.default.fileExists(atPath: resultsPath) {
                        throw CredentialError(
                            .invalidArgument,
                            path: resultsPath,
                            "The results file already exists.",
                            hint:
                                "Continue that run with --resume \(ErrorHints.shellQuoted(resultsPath)), or choose another --results file."
                        )
                    }
                    file = try AppendFile.open(path: resultsPath, exclusive: true)
                    file.append(header.jsonLine)
                    file.flush()
                }
                let journalPath = ResumeState.journalPath(forResults: resultsPath)
                // A new run starts a new journal; a resumed one keeps what it has.
                let journal = try AppendFile.open(path: journalPath, truncateTo: continuing ? nil : 0)
                output = BulkOutput(results: file, journal: journal)
            } else {
                output = BulkOutput(results: .standardOutput, journal: nil)
                // The result lines are the JSON answer: no error object may follow them.
                JSONFailure.printed = true
            }
            var options = BulkSender.Options()
            options.connections = connections
            options.maxAttempts = maxAttempts
            options.resendUncertain = resendUncertain
            let sender = try BulkSender(
                configuration: prepared.configuration,
                template: template,
                options: options,
                feed: feed,
                output: output
            )
            let showProgress = !quiet && style.isTerminal
            let total =
                showProgress
                ? TokenFeed.countEntries(path: tokensPath).map { max(0, $0 - (state?.finalCount ?? 0)) } : nil
            return (sender, resultsPath, total, state?.finalCount ?? 0)
        }

        let signals = SignalWatch(signals: [SIGINT, SIGTERM]) { count in
            if count == 1 {
                if !quiet {
                    printError(
                        "\r\u{1B}[2K" + style.paint("stopping:", .yellow, .bold)
                            + " no new tokens; waiting for the notifications in flight (Ctrl-C again to stop waiting)"
                    )
                }
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
            if let resultsPath, resultsPath != resume, Self.holdsNoResults(resultsPath) {
                unlink(resultsPath)
                unlink(ResumeState.journalPath(forResults: resultsPath))
            }
            throw exitStatus(for: error)
        }
        progress?.finish()
        summary.skipped = skipped

        if json, resultsPath != nil {
            try printJSON(
                BulkSummaryOutput(schemaVersion: ReportSchema.schemaVersion, results: resultsPath, summary: summary)
            )
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

    /// A resumed run must be the run the results file was started for: same credential, topic,
    /// push type, payload and gateway. Otherwise one announcement would go out two ways.
    static func checkSameRun(_ state: ResumeState, _ header: BulkRunHeader, resultsPath: String) throws {
        guard let recorded = state.header else {
            printError(
                TerminalStyle.stderr.paint("error:", .red, .bold)
                    + " \(resultsPath): this results file has no run header, so what it was sent with cannot be checked.\n  "
                    + TerminalStyle.stderr.paint("hint:", .bold)
                    + " Start a new run with --results NEW-FILE; the lines already done are listed in \(resultsPath)."
            )
            throw ExitCode(64)
        }
        let differences = recorded.differences(from: header)
        guard differences.isEmpty else {
            printError(
                TerminalStyle.stderr.paint("error:", .red, .bold)
                    + " \(resultsPath) belongs to another run: \(differences.joined(separator: ", ")) differ\(differences.count == 1 ? "s" : ""). Nothing was sent.\n  "
                    + TerminalStyle.stderr.paint("hint:", .bold)
                    + " Resume with exactly the credential, topic, push type, payload and gateway the run started with, or start a new run with --results NEW-FILE."
            )
            throw ExitCode(64)
        }
    }

    /// The command that continues this run, ready to paste: the same arguments, with the results
    /// file given to --resume.
    static func resumeCommand(arguments: [String], resultsPath: String) -> String {
        var words: [String] = [arguments.first ?? "apnsctl"]
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--results" || argument == "--resume" {
                index += 2
                continue
            }
            if argument.hasPrefix("--results=") || argument.hasPrefix("--resume=") {
                index += 1
                continue
            }
            words.append(argument)
            index += 1
        }
        words += ["--resume", resultsPath]
        return words.map(ErrorHints.shellQuoted).joined(separator: " ")
    }

    /// True when the file has nothing but its run header (or nothing at all).
    static func holdsNoResults(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.split(separator: UInt8(ascii: "\n")).allSatisfy { BulkRunHeader.parse($0) != nil }
    }

    private func render(_ summary: BulkSender.Summary, resultsPath: String?, style: TerminalStyle) -> String {
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
                "  uncertain: \(count(summary.uncertain - summary.outcomeUnknown)) answers were lost in flight, so those notifications were sent again and may have arrived twice (\"uncertain\": true in the results)."
            )
        }
        if summary.outcomeUnknown > 0 {
            lines.append(
                "  outcome unknown: \(count(summary.outcomeUnknown)) lines were in flight when the earlier run stopped; they may have been delivered and were not sent again (\"error\": \"outcome_unknown\"; --resend-uncertain sends them)."
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
        if let cause = summary.stoppedBy {
            let what = cause == .interrupted ? "interrupted" : "stopped"
            lines.append(
                style.paint("\(what): ", .red, .bold) + (summary.stopMessage ?? "the run stopped early")
                    + (summary.unfinished > 0
                        ? " (\(count(summary.unfinished)) lines that were read have no result yet"
                            + (resultsPath == nil
                                ? ")" : "; they and the lines not yet read are sent by the command below)")
                        : "")
            )
            if let hint = summary.stopHint { lines.append("  " + style.paint("→ \(hint)", .bold)) }
            if let resultsPath {
                lines.append(
                    "  continue with: " + Self.resumeCommand(arguments: CommandLine.arguments, resultsPath: resultsPath)
                )
            }
        }
        return lines.joined(separator: "\n")
    }
}

struct BulkSummaryOutput: Encodable {
    var schemaVersion: Int
    var results: String?
    var summary: BulkSender.Summary
    /// Why the run stopped early, as every report gives an error.
    var error: ReportedError?

    init(schemaVersion: Int, results: String?, summary: BulkSender.Summary) {
        self.schemaVersion = schemaVersion
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
