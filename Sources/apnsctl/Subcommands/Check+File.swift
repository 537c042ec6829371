import CredentialFormats
import Foundation
import PushChecks
import PushMonitoring
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Check {
    /// Written whole or not at all; mode 0644, as node_exporter's collector reads it.
    static func writeAtomically(_ text: String, to path: String) throws {
        try PrivateFile.write(Array(text.utf8), to: path, overwrite: true, mode: 0o644)
    }
}

extension Check {
    /// With `--format prometheus`, a check that could not be made still publishes when it ran
    /// and that it failed: without any series, no alert (not even the staleness one) could fire.
    func publishMetricsAnyway(_ run: CheckRun) throws {
        guard format == .prometheus, !report.json else { return }
        let text = CheckMetrics.render(run, x509: x509.exposition)
        if let output {
            try Self.writeAtomically(text, to: output)
        } else {
            try writeStandardOutput(Array(text.utf8))
        }
    }
}

extension Check {
    /// With `--format junit`, a check that stopped before judging anything still writes a report:
    /// one test case in error with the reason, so that CI shows why rather than a failed script.
    func publishJUnitAnyway(started: Date, since clock: ContinuousClock.Instant) throws {
        guard format == .junit, !report.json, let error = JSONFailure.error else { return }
        let text = JUnitReport.stopped(
            suite: Self.junitSuite,
            classname: Self.junitClassname,
            error: error,
            startedAt: started,
            duration: Self.seconds(since: clock)
        ).xml()
        if let output {
            try Self.writeAtomically(text, to: output)
        } else {
            try writeStandardOutput(Array(text.utf8))
        }
    }

    /// The JUnit report's suite, and the class CI files its test cases under.
    static let junitSuite = "apnsctl check"
    static let junitClassname = "apnsctl.check"

    /// The seconds since `start`, for a report's run time.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
