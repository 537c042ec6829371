import Foundation
import PushStore

extension JUnitReport {
    /// `check`'s report as JUnit, as the suite `suite` with its cases under `classname` (the
    /// command, as the front end names it), counted as its exit status counts:
    ///
    /// - one test case per app and environment (``CheckReport/verdicts`` with `--topic`, else
    ///   the whole store's ``CheckReport/storeVerdicts``), named `com.example.app (production)`
    ///   (`(any environment)` when none was asked);
    /// - with `--topic`, an app fails when it has no fit credential (warnings are told in its
    ///   output, as they do not fail such a check); for the whole store, when one of its
    ///   credentials (its candidates and the ones they supersede) has a finding at or above
    ///   `threshold` (`--fail-on`), the first such finding's code as the failure's type;
    /// - an error when something about the app could not be checked (a key the Secret Service
    ///   could not be asked for, a file that could not be read);
    /// - skipped: a development app found in the store, in a production check, and a credential
    ///   of the store that does not serve the environment asked about while another serves its
    ///   app there;
    /// - credentials named on the command line, and what the whole store's check found outside
    ///   any app (orphaned secrets, unaccounted files), a test case each.
    public static func check(
        _ report: CheckReport,
        failingOn threshold: Finding.Severity?,
        suite: String,
        classname: String,
        startedAt: Date,
        duration: Double,
        hostname: String = JUnitReport.localHostname
    ) -> JUnitReport {
        let environment = report.request.environment
        let judged = report.judged
        var cases: [TestCase] = []
        if let verdicts = report.verdicts {
            for verdict in verdicts {
                let names = verdict.fit + verdict.unfit + verdict.couldNotCheck
                let results = names.compactMap { name in report.results.first { $0.name == name } }
                cases.append(appCase(verdict, results: results, classname: classname))
            }
        } else if let storeVerdicts = report.storeVerdicts {
            var claimed = Set<String>()
            for verdict in storeVerdicts {
                let superseded = verdict.skipped.filter { $0.reason == .superseded }.map(\.credential)
                let names = Set(verdict.fit + verdict.unfit + verdict.couldNotCheck + superseded)
                claimed.formUnion(names)
                let results = judged.filter { $0.origin == "store" && names.contains($0.name) }
                cases.append(storeAppCase(verdict, results: results, threshold: threshold, classname: classname))
            }
            for entry in report.skipped {
                cases.append(
                    TestCase(
                        name: caseName(entry.credential, environment),
                        classname: classname,
                        outcome: .skipped(message: entry.message)
                    )
                )
            }
            for result in judged where !(result.origin == "store" && claimed.contains(result.name)) {
                cases.append(
                    credentialCase(result, environment: environment, threshold: threshold, classname: classname)
                )
            }
        } else {
            for result in judged {
                cases.append(
                    credentialCase(result, environment: environment, threshold: threshold, classname: classname)
                )
            }
        }
        var properties: [(name: String, value: String)] = [("warn_days", String(report.request.warnDays))]
        if let environment { properties.append(("environment", environment.rawValue)) }
        // One property per name: readers refuse a name given twice.
        if !report.request.topics.isEmpty {
            properties.append(("topics", report.request.topics.joined(separator: " ")))
        }
        return JUnitReport(
            name: suite,
            timestamp: startedAt,
            duration: duration,
            hostname: hostname,
            properties: properties,
            cases: cases
        )
    }

    /// `com.example.app (production)`, or `(any environment)` when none was asked.
    static func caseName(_ subject: String, _ environment: PushEnvironment?) -> String {
        "\(subject) (\(environment?.rawValue ?? "any environment"))"
    }

    /// An app asked about with `--topic`: its verdict decides (one fit credential makes it ready,
    /// whatever the others say), as it decides the exit status.
    private static func appCase(_ verdict: AppVerdict, results: [CheckResult], classname: String) -> TestCase {
        let name = caseName(verdict.topic, verdict.environment)
        let details = results.map(describe).joined(separator: "\n")
        let outcome: TestCase.Outcome
        switch verdict.state {
        case .sandboxOnly:
            outcome = .skipped(message: sandboxOnly(verdict))
        case .ready:
            outcome = .passed
        case .couldNotCheck:
            let found = self.outcome(of: results, threshold: .problem, subject: name)
            if case .error = found {
                outcome = found
            } else {
                outcome = .error(
                    type: AppVerdict.State.couldNotCheck.rawValue,
                    message: "\(name): no credential for it could be verified.",
                    details: details
                )
            }
        case .notReady:
            let found = self.outcome(of: results, threshold: .problem, subject: name)
            if case .passed = found {
                let left = verdict.skipped.filter { $0.reason != .otherApp }.map { "\($0.credential): \($0.message)" }
                outcome = .failed(
                    type: AppVerdict.State.notReady.rawValue,
                    message: "\(name): no stored credential serves it.",
                    details: (left.isEmpty ? [] : ["Left out:"] + left).joined(separator: "\n")
                )
            } else {
                outcome = found
            }
        }
        return TestCase(name: name, classname: classname, outcome: outcome, output: details)
    }

    /// An app of a whole-store check: its credentials' findings decide at `threshold`
    /// (`--fail-on`), as they decide the exit status.
    private static func storeAppCase(
        _ verdict: AppVerdict,
        results: [CheckResult],
        threshold: Finding.Severity?,
        classname: String
    ) -> TestCase {
        let name = caseName(verdict.topic, verdict.environment)
        return TestCase(
            name: name,
            classname: classname,
            outcome: verdict.state == .sandboxOnly
                ? .skipped(message: sandboxOnly(verdict))
                : outcome(of: results, threshold: threshold, subject: name),
            output: results.map(describe).joined(separator: "\n")
        )
    }

    static func sandboxOnly(_ verdict: AppVerdict) -> String {
        "\(verdict.topic) is sandbox only: it has no production credential (not a failure)."
    }

    private static func credentialCase(
        _ result: CheckResult,
        environment: PushEnvironment?,
        threshold: Finding.Severity?,
        classname: String
    ) -> TestCase {
        let name = caseName(result.name, environment)
        return TestCase(
            name: name,
            classname: classname,
            outcome: outcome(of: [result], threshold: threshold, subject: name),
            output: describe(result)
        )
    }

    /// An error when one of `results` could not be checked; else a failure when one has a
    /// finding at or above `threshold`, problems first; else passed.
    private static func outcome(
        of results: [CheckResult],
        threshold: Finding.Severity?,
        subject: String
    )
        -> TestCase.Outcome
    {
        let details = results.map(describe).joined(separator: "\n")
        for result in results {
            if let error = result.error {
                return .error(
                    type: error.code.name,
                    message: "\(subject): \(result.name) could not be checked: \(error.message)",
                    details: details
                )
            }
            if let unverified = result.findings.first(where: { $0.code == .secretUnverified }) {
                return .error(
                    type: unverified.code.rawValue,
                    message: "\(subject): \(result.name): \(unverified.message)",
                    details: details
                )
            }
        }
        let failing = results.flatMap { result in
            result.findings.filter { finding in
                switch threshold {
                case .warning: return true
                case .problem: return finding.severity == .problem
                case nil: return false
                }
            }.map { (result, $0) }
        }
        let first = failing.first { $0.1.severity == .problem } ?? failing.first
        guard let (result, finding) = first else { return .passed }
        return .failed(
            type: finding.code.rawValue,
            message: "\(subject): \(result.name): \(finding.message)",
            details: details
        )
    }

    /// One credential's findings, each with its fix, for a test case's text.
    static func describe(_ result: CheckResult) -> String {
        var lines: [String] = []
        if let error = result.error {
            lines.append("\(result.name): could not be checked [\(error.code.name)]: \(error.message)")
            if let hint = error.hint { lines.append("  fix: \(hint)") }
        }
        for finding in result.findings {
            lines.append("\(result.name): \(finding.severity.rawValue) [\(finding.code)]: \(finding.message)")
            if let hint = finding.hint { lines.append("  fix: \(hint)") }
        }
        if lines.isEmpty {
            let expiry = result.daysLeft.map { ", expires in \($0) day\($0 == 1 ? "" : "s")" } ?? ""
            lines.append("\(result.name): fine\(expiry)")
        }
        return lines.joined(separator: "\n")
    }
}
