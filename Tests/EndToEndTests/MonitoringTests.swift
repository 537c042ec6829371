import Foundation
import Glibc
import TestSupport
import Testing

/// The monitoring recipe, end to end: `check --format prometheus --output` into node_exporter's
/// textfile folder, read by Debian's own node_exporter.
struct MonitoringTests {
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func metricsAreWrittenAtomicallyAndAFindingIsNotAFailure() throws {
        let folder = try TemporaryFolder()
        let expiring = try TestPKI.mint(in: folder, name: "soon", bundle: "com.example.soon", days: 10)
        let textfiles = folder.path("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        let output = textfiles + "/apnsctl.prom"

        let written = try CLI.run(["check", "--format", "prometheus", "--output", output, expiring])
        #expect(written.status == 0, "a finding is in the metrics, not in the exit status: \(written.stderr)")
        #expect(try Self.mode(output) == 0o644)
        #expect(try String(contentsOfFile: output, encoding: .utf8).contains("apnsctl_credential_problem{"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: textfiles) == ["apnsctl.prom"],
            "no temporary file left"
        )

        let strict = try CLI.run([
            "check", "--format", "prometheus", "--output", output, "--fail-on", "warning", expiring,
        ])
        #expect(strict.status == 1, "--fail-on warning: the metrics and the exit status")
        let problemsOnly = try CLI.run(["check", "--format", "prometheus", "--fail-on", "problem", expiring])
        #expect(problemsOnly.status == 0, "expiring is a warning, not a problem")

        let unwritable = try CLI.run([
            "check", "--format", "prometheus", "--output", folder.path("missing/x.prom"), expiring,
        ])
        #expect(unwritable.status == 2)
        #expect(unwritable.stderr.contains("missing/x.prom"))
    }

    @Test func nodeExporterPublishesTheSeries() throws {
        let folder = try TemporaryFolder()
        let expiring = try TestPKI.mint(in: folder, name: "soon", bundle: "com.example.soon", days: 10)
        let textfiles = folder.path("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        #expect(
            try CLI.run(["check", "--format", "prometheus", "--output", textfiles + "/apnsctl.prom", expiring]).status
                == 0
        )

        let port = try ProxyCommandTests.closedPort()
        let exporter = Process()
        exporter.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus-node-exporter")
        exporter.arguments = [
            "--web.listen-address=127.0.0.1:\(port)", "--collector.disable-defaults", "--collector.textfile",
            "--collector.textfile.directory=\(textfiles)",
        ]
        exporter.standardOutput = FileHandle.nullDevice
        exporter.standardError = FileHandle.nullDevice
        try exporter.run()
        defer {
            kill(exporter.processIdentifier, SIGKILL)
            exporter.waitUntilExit()
        }
        var metrics = ""
        for _ in 0..<100 {
            let scrape = try CLI.runProgram("curl", ["-s", "http://127.0.0.1:\(port)/metrics"], timeout: 10)
            if scrape.status == 0, scrape.stdout.contains("node_textfile") {
                metrics = scrape.stdout
                break
            }
            usleep(100_000)
        }
        #expect(metrics.contains("apnsctl_credential_seconds_left{"), "node_exporter publishes apnsctl's series")
        #expect(metrics.contains("apnsctl_credential_problem{"))
        #expect(metrics.contains("node_textfile_scrape_error 0"), "and read the file without error")
    }
}
