import CredentialFormats
import Foundation
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
