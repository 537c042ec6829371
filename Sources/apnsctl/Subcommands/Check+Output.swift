import Foundation
import PushCredentials

/// `check`'s human output. Problems and warnings carry a label as well as a colour, so they read
/// apart without colour too.
struct CheckTextOutput {
    let style: TerminalStyle

    func printResults(_ results: [CheckResult]) {
        for result in results { printResult(result) }
        let problems = results.filter { !$0.fit }.count
        let warned = results.filter { $0.fit && !$0.findings.isEmpty }.count
        print(
            "\n\(results.count) checked: \(results.count - problems - warned) fine, \(warned) with warnings, \(problems) with problems or errors"
        )
    }

    func printSelection(_ selection: CheckSelection, results: [CheckResult], environment: PushEnvironment?) {
        let target = selection.topic + (environment.map { " (\($0))" } ?? "")
        let fit = results.filter(\.fit)
        for result in fit { printResult(result) }
        let skipped = selection.skipped(judged: results)
        if !skipped.isEmpty {
            if !fit.isEmpty { print("") }
            print(style.paint("skipped:", .bold))
            for entry in skipped {
                let label = entry.judged ? style.paint("not fit", .red) : style.paint("other app", .dim)
                print(
                    "  - \(style.paint(Untrusted.display(entry.name), .bold)) [\(label)] \(Untrusted.display(entry.reason))"
                )
                if entry.judged, let result = results.first(where: { $0.name == entry.name }) {
                    for finding in result.findings where finding.severity == .problem {
                        if let hint = finding.hint {
                            print("      \(style.paint("→ \(Untrusted.display(hint))", .dim))")
                        }
                    }
                    if let hint = result.error?.hint { print("      \(style.paint("→ \(hint)", .dim))") }
                }
            }
        }
        print("")
        if fit.isEmpty {
            let what = selection.candidates.isEmpty ? "No stored credential is for" : "No stored credential is fit for"
            print(style.paint("✗ \(what) \(target).", .red, .bold))
        } else {
            let names = fit.map(\.name).joined(separator: ", ")
            print(
                style.paint("✓", .green)
                    + " \(fit.count) fit credential\(fit.count == 1 ? "" : "s") for \(target): \(names)"
            )
        }
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
            let label =
                finding.severity == .problem
                ? style.paint("problem:", .red, .bold) : style.paint("warning:", .yellow, .bold)
            print("    \(label) \(Untrusted.display(finding.message))")
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
        if let keyId = result.keyId { summary.append("key \(keyId)") }
        if let teamId = result.teamId, result.kind == .tokenKey { summary.append("team \(teamId)") }
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
