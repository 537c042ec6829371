import Foundation
import PushGateway

extension JUnitReport {
    /// `preflight`'s report as JUnit, as the suite `suite` with its cases under `classname` (the
    /// command, as the front end names it), counted as its exit status counts:
    ///
    /// - against Apple's gateways, first a test case for the trust store (`APNs root in the trust
    ///   store (production)`), failed when it lacks the root APNs' servers chain to;
    /// - one test case per app (`com.example.app (production)`) or, when credentials were named,
    ///   per credential: passed when ready (warnings such as an expiry within --warn-days are in
    ///   its output: they do not stop a deploy), failed when not ready with the finding's code or
    ///   APNs' reason as its type and the fix in its text, an error when it could not be checked
    ///   (network, DNS, TLS, a Secret Service out of reach), skipped for a development app found
    ///   in the store (sandbox only) in a production preflight.
    public static func preflight(
        _ run: PreflightRun,
        environment: PushEnvironment,
        topics: [String],
        suite: String,
        classname: String,
        startedAt: Date,
        duration: Double,
        hostname: String = JUnitReport.localHostname
    ) -> JUnitReport {
        var cases: [TestCase] = []
        if let trust = run.trustStore {
            let name = "APNs root in the trust store (\(environment))"
            let output = [trust.warning, trust.problem, trust.fix.map { "fix: \($0)" }].compactMap(\.self)
                .joined(separator: "\n")
            cases.append(
                TestCase(
                    name: name,
                    classname: classname,
                    outcome: trust.ready
                        ? .passed
                        : .failed(
                            type: "trust_store",
                            message: "\(name): \(trust.problem ?? "the trust store lacks the root APNs chains to.")",
                            details: output
                        ),
                    output: output
                )
            )
        }
        if let apps = run.apps {
            for verdict in apps {
                let names = verdict.fit + verdict.unfit + verdict.couldNotCheck
                let reports = run.reports.filter { names.contains($0.credential) && $0.topic == verdict.topic }
                cases.append(appCase(verdict, reports: reports, classname: classname))
            }
        } else {
            for report in run.reports {
                let name = caseName(report.credential, environment)
                cases.append(
                    TestCase(
                        name: name,
                        classname: classname,
                        outcome: outcome(of: [report], subject: name),
                        output: describe(report)
                    )
                )
            }
        }
        var properties: [(name: String, value: String)] = [("environment", environment.rawValue)]
        // One property per name: readers refuse a name given twice.
        if !topics.isEmpty { properties.append(("topics", topics.joined(separator: " "))) }
        return JUnitReport(
            name: suite,
            timestamp: startedAt,
            duration: duration,
            hostname: hostname,
            properties: properties,
            cases: cases
        )
    }

    private static func appCase(_ verdict: AppVerdict, reports: [PreflightReport], classname: String) -> TestCase {
        let name = caseName(verdict.topic, verdict.environment)
        let details = reports.map(describe).joined(separator: "\n")
        let outcome: TestCase.Outcome
        switch verdict.state {
        case .ready:
            outcome = .passed
        case .sandboxOnly:
            outcome = .skipped(
                message: "\(verdict.topic) is sandbox only: it has no production credential (not a failure)."
            )
        case .couldNotCheck, .notReady:
            let found = self.outcome(of: reports, subject: name)
            if case .passed = found {
                let left = verdict.skipped.filter { $0.reason != .otherApp }.map { "\($0.credential): \($0.message)" }
                let environment = verdict.environment.map { " in \($0)" } ?? ""
                outcome = .failed(
                    type: AppVerdict.State.notReady.rawValue,
                    message: "\(name): no stored credential could serve it\(environment).",
                    details: (left.isEmpty ? [] : ["Left out:"] + left).joined(separator: "\n")
                )
            } else {
                outcome = found
            }
        }
        return TestCase(name: name, classname: classname, outcome: outcome, output: details)
    }

    /// Unfit first (it decides a deploy, as the exit status does), then could not be checked,
    /// else passed.
    private static func outcome(of reports: [PreflightReport], subject: String) -> TestCase.Outcome {
        let details = reports.map(describe).joined(separator: "\n")
        if let unfit = reports.first(where: { $0.fitness == .unfit }) {
            let why = reason(unfit)
            return .failed(type: why.type, message: "\(subject): \(unfit.credential): \(why.message)", details: details)
        }
        if let unknown = reports.first(where: { $0.fitness == .couldNotCheck }) {
            let why = reason(unknown)
            return .error(
                type: why.type,
                message: "\(subject): \(unknown.credential): \(why.message)",
                details: details
            )
        }
        return .passed
    }

    /// Why a credential is not ready, as the command line says it: the error that stopped it,
    /// APNs' answer, or the finding that blocks the deploy; with what to do.
    static func reason(_ report: PreflightReport) -> (type: String, message: String, fix: String?) {
        if let error = report.error.map(PreflightCheck.reported) {
            let what = report.connectionError != nil ? "could not connect" : "could not be checked"
            return (error.code, "\(what): \(error.message)", error.hint)
        }
        if let auth = report.authCheck, auth.verdict != .accepted {
            let answer = auth.verdict == .rejected ? "rejects" : "gave no verdict on"
            return (
                auth.reason ?? auth.verdict.rawValue,
                "APNs \(answer) it\(auth.reason.map { ": \($0)" } ?? "") (\(auth.explanation))",
                auth.fix
            )
        }
        if let blocking = report.blockingFinding {
            return (blocking.code.rawValue, blocking.message, blocking.hint)
        }
        return (AppVerdict.State.notReady.rawValue, "not ready", nil)
    }

    /// One credential's preflight, for a test case's text: its verdict, then its findings.
    static func describe(_ report: PreflightReport) -> String {
        var lines: [String] = []
        if report.ready {
            let total = report.handshake?.totalDuration.map { String(format: "%.0f ms", $0 * 1000) }
            lines.append(
                "\(report.credential): ready, accepted for \(report.topic ?? "its topic")"
                    + (total.map { " (handshake \($0))" } ?? "")
            )
        } else {
            let why = reason(report)
            lines.append("\(report.credential): not ready [\(why.type)]: \(why.message)")
            if let fix = why.fix { lines.append("  fix: \(fix)") }
        }
        for finding in report.findings where finding != report.blockingFinding || report.ready {
            lines.append("\(report.credential): \(finding.severity.rawValue) [\(finding.code)]: \(finding.message)")
            if let hint = finding.hint { lines.append("  fix: \(hint)") }
        }
        if let fallback = report.portFallback { lines.append("\(report.credential): \(fallback.summary)") }
        return lines.joined(separator: "\n")
    }
}
