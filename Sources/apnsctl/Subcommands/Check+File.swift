import Foundation
import PushCredentials
import PushMonitoring

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Check {
    /// A temporary file beside `path`, written, synced and renamed over it: a reader sees the old
    /// file or the new one, never half of either. Mode 0644, as node_exporter's collector reads it.
    static func writeAtomically(_ text: String, to path: String) throws {
        let destination = URL(fileURLWithPath: path)
        let temporary = destination.deletingLastPathComponent()
            .appendingPathComponent(".\(destination.lastPathComponent).\(getpid()).tmp")
        let bytes = Array(text.utf8)
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CredentialError(
                .writeFailed,
                path: path,
                "The report cannot be written: the folder does not take a new file (\(String(cString: strerror(errno)))).",
                hint: "Check that the folder exists and is writable."
            )
        }
        fchmod(fd, 0o644)  // whatever the umask: the collector may run as another user
        let written = writeAll(fd, bytes) && fsync(fd) == 0
        let reason = String(cString: strerror(errno))
        close(fd)
        guard written, rename(temporary.path, destination.path) == 0 else {
            let failure = written ? String(cString: strerror(errno)) : reason
            unlink(temporary.path)
            throw CredentialError(
                .writeFailed,
                path: path,
                "The report could not be written (\(failure)); the previous one, if any, is unchanged.",
                hint: "Free some space or fix the folder's permissions."
            )
        }
    }
}

extension Check {
    /// With `--format prometheus`, a check that could not be made still publishes when it ran
    /// and that it failed: without any series, no alert (not even the staleness one) could fire.
    func publishMetricsAnyway(_ run: CheckRun) throws {
        guard format == .prometheus, !report.json else { return }
        let text = CheckMetrics.render(run)
        if let output {
            try Self.writeAtomically(text, to: output)
        } else {
            try writeStandardOutput(Array(text.utf8))
        }
    }
}
