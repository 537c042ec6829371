import Foundation
import PushChecks

/// `check`'s human output. Problems and warnings carry a label as well as a colour, so they read
/// apart without colour too.
struct CheckTextOutput {
    let style: TerminalStyle

    /// The results that count in full (``CheckReport/judged``), then those `skipped` (another
    /// credential serves their app in the environment asked about) with why.
    func printResults(_ judged: [CheckResult], skipped: [AppSelection.Skipped] = []) {
        for result in judged { printResult(result) }
        if !skipped.isEmpty {
            print(style.paint("skipped:", .bold))
            for entry in skipped { printSkipped(entry, as: "other environment") }
        }
        let problems = judged.filter { !$0.fit }.count
        let warned = judged.filter { $0.fit && !$0.findings.isEmpty }.count
        let skippedText = skipped.isEmpty ? "" : "; \(skipped.count) skipped"
        print(
            "\n\(judged.count) checked: \(judged.count - problems - warned) fine, \(warned) with warnings, \(problems) with problems or errors\(skippedText)"
        )
    }

    /// One line per app found in the store, under a whole-store check.
    func printAppSummary(_ verdicts: [AppVerdict]) {
        guard !verdicts.isEmpty else { return }
        let target = verdicts[0].environment.map { " for \($0)" } ?? ""
        print("\nApps\(target):")
        for verdict in verdicts {
            let app = Untrusted.display(verdict.topic)
            let line: String
            switch verdict.state {
            case .ready:
                line = style.paint("✓", .green) + " \(app): \(Untrusted.display(verdict.fit.joined(separator: ", ")))"
            case .sandboxOnly: line = style.paint("- \(app): sandbox only", .dim)
            case .couldNotCheck: line = style.paint("?", .red, .bold) + " \(app): could not be verified"
            case .notReady: line = style.paint("✗", .red, .bold) + " \(app): no fit credential"
            }
            print("  " + line)
        }
    }

    /// One app's verdict: its fit credentials in full, then what was left out and why.
    func printVerdict(_ verdict: AppVerdict, results: [CheckResult]) {
        let target = verdict.topic + (verdict.environment.map { " (\($0))" } ?? "")
        let result = { (name: String) in results.first { $0.name == name } }
        let fit = verdict.fit.compactMap(result)
        for entry in fit { printResult(entry) }
        let unfit = verdict.unfit + verdict.couldNotCheck
        if !unfit.isEmpty || !verdict.skipped.isEmpty {
            if !fit.isEmpty { print("") }
            print(style.paint("skipped:", .bold))
            for name in unfit {
                let judged = result(name)
                let label =
                    judged?.fitness == .couldNotCheck ? style.paint("not checked", .red) : style.paint("not fit", .red)
                let why =
                    judged?.error.map { "could not be checked: \($0.message)" }
                    ?? judged?.findings.filter { $0.severity == .problem || $0.code == .secretUnverified }.map(
                        \.message
                    ).joined(separator: " ") ?? ""
                print("  - \(style.paint(Untrusted.display(name), .bold)) [\(label)] \(Untrusted.display(why))")
                for finding in judged?.findings ?? [] where finding.severity == .problem {
                    if let hint = finding.hint { print("      \(style.paint("→ \(Untrusted.display(hint))", .dim))") }
                }
                if let hint = judged?.error?.hint { print("      \(style.paint("→ \(hint)", .dim))") }
            }
            for entry in verdict.skipped {
                let label: String
                switch entry.reason {
                case .otherApp: label = "other app"
                case .otherEnvironment: label = "other environment"
                case .superseded: label = "superseded"
                }
                printSkipped(entry, as: label)
            }
        }
        print("")
        switch verdict.state {
        case .ready:
            let names = verdict.fit.joined(separator: ", ")
            print(
                style.paint("✓", .green)
                    + " \(verdict.fit.count) fit credential\(verdict.fit.count == 1 ? "" : "s") for \(target): \(names)"
            )
        case .sandboxOnly:
            print(
                style.paint(
                    "- \(verdict.topic) is sandbox only: it has no production credential (not a failure).",
                    .dim
                )
            )
        case .couldNotCheck:
            print(style.paint("? No stored credential for \(target) could be verified.", .red, .bold))
        case .notReady:
            let none = verdict.unfit.isEmpty && verdict.couldNotCheck.isEmpty
            let what = none ? "No stored credential is for" : "No stored credential is fit for"
            print(style.paint("✗ \(what) \(target).", .red, .bold))
        }
    }

    /// A credential left out of the verdict, with why.
    private func printSkipped(_ entry: AppSelection.Skipped, as label: String) {
        print(
            "  - \(style.paint(Untrusted.display(entry.credential), .bold)) [\(style.paint(label, .dim))] \(Untrusted.display(entry.message))"
        )
    }

    func printResult(_ result: CheckResult) {
        let mark: String
        if result.error != nil {
            mark = style.paint("?", .red, .bold)
        } else if !result.fit {
            mark = style.paint("✗", .red, .bold)
        } else if !result.findings.isEmpty {
            mark = style.paint("!", .yellow, .bold)
        } else {
            mark = style.paint("✓", .green)
        }
        print("\(mark) \(style.paint(Untrusted.display(result.name), .bold))  \(style.paint(summary(result), .dim))")
        if let fingerprint = result.publicKeySha256 {
            print("    \(style.paint("public key SHA-256 \(fingerprint)", .dim))")
        }
        for finding in result.findings {
            print("    \(style.label(finding.severity)) \(Untrusted.display(finding.message))")
            if let hint = finding.hint { print("    \(style.paint("→ \(Untrusted.display(hint))", .dim))") }
        }
        if let error = result.error {
            print("    \(style.paint("could not check:", .red, .bold)) \(Untrusted.display(error.message))")
            if let hint = error.hint { print("    \(style.paint("→ \(Untrusted.display(hint))", .dim))") }
        }
    }

    private func summary(_ result: CheckResult) -> String {
        var summary: [String] = []
        if let kind = result.kind { summary.append(kind == .tokenKey ? "token key" : "certificate") }
        if let keyID = result.keyID { summary.append("key \(keyID)") }
        if let teamID = result.teamID, result.kind == .tokenKey { summary.append("team \(teamID)") }
        if let curve = result.curve { summary.append(curve) }
        if !result.topics.isEmpty {
            summary.append(
                Untrusted.display(result.topics[0]) + (result.topics.count > 1 ? " (+\(result.topics.count - 1))" : "")
            )
        } else if result.kind == .tokenKey, result.origin == "file" {
            summary.append("any topic of the team")
        }
        if !result.environments.isEmpty {
            summary.append(result.environments.map(\.rawValue).joined(separator: "+"))
        }
        if let notAfter = result.notAfter, let days = result.daysLeft {
            summary.append("expires \(CertificateRenderer.day(notAfter)) (\(days) days)")
        }
        return summary.joined(separator: "  ")
    }
}
