import Foundation
import Glibc
import TestSupport
import Testing

/// The monitoring recipe, end to end: `check --format prometheus --output` into node_exporter's
/// textfile folder, read by Debian's own node_exporter.
struct MonitoringTests {
    @Test func metricsAreWrittenAtomicallyAndAFindingIsNotAFailure() throws {
        let folder = try TemporaryFolder()
        let expiring = try TestPKI.mint(in: folder, name: "soon", bundle: "com.example.soon", days: 10)
        let textfiles = folder.path("textfiles")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        let output = textfiles + "/apnsctl.prom"

        let written = try CLI.run(["check", "--format", "prometheus", "--output", output, expiring])
        #expect(written.status == 0, "a finding is in the metrics, not in the exit status: \(written.stderr)")
        #expect(try posixPermissions(output) == 0o644)
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
        try waitUntil {
            let scrape = try CLI.runProgram("curl", ["-s", "http://127.0.0.1:\(port)/metrics"], timeout: 10)
            guard scrape.status == 0, scrape.stdout.contains("node_textfile") else { return false }
            metrics = scrape.stdout
            return true
        }
        #expect(metrics.contains("x509_cert_not_after{"), "node_exporter publishes the x509 family")
        #expect(metrics.contains("apnsctl_credential_expiry_timestamp_seconds{"), "and apnsctl's own series")
        #expect(metrics.contains("apnsctl_credential_problem{"))
        #expect(metrics.contains("apnsctl_check_success 1"))
        #expect(metrics.contains("node_textfile_scrape_error 0"), "and read the file without error")
    }

    /// A store's check gives x509-certificate-exporter v4's source series by default and
    /// version 3's names on request; promtool reads both.
    @Test func aStoresCheckGivesVersion4SourceSeriesAndVersion3OnRequest() throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [("myapp", "com.example.app", 40, [.sandbox, .production])])
        let v4 = try CLI.run(["check", "--skip-secrets", "--store", store, "--format", "prometheus"]).succeeded()
        let v3 = try CLI.run([
            "check", "--skip-secrets", "--store", store, "--format", "prometheus", "--x509-names", "v3",
        ])
        .succeeded()
        let resolved = URL(fileURLWithPath: store).resolvingSymlinksInPath().path
        let source = "source_kind=\"keyring\",source_name=\"\(Self.escapeLabel(resolved))\""
        #expect(v4.stdout.contains("x509_source_up{\(source)} 1"), "\(v4.stdout)")
        #expect(v4.stdout.contains("x509_source_bundles{\(source)} 1"))
        #expect(v4.stdout.contains("x509_source_errors_total{\(source),reason=\"read_failed\"} 0"))
        #expect(!v4.stdout.contains("x509_read_errors") && !v4.stdout.contains("x509_cert_not_before"))
        #expect(v3.stdout.contains("\nx509_read_errors 0\n") && v3.stdout.contains("x509_cert_not_before{"))
        #expect(!v3.stdout.contains("x509_source_"))
        for text in [v4.stdout, v3.stdout] {
            let checked = try CLI.runProgram("promtool", ["check", "metrics"], stdin: text)
            #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        }
    }

    static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// An expiring certificate is a warning, not a problem; its expiry is a timestamp; the
    /// certificate is published in x509-certificate-exporter's names with that project's labels.
    @Test func theSeriesSayWhatTheyMeanInTheNamesPeopleAlertOn() throws {
        let folder = try TemporaryFolder()
        let expiring = try TestPKI.mint(in: folder, name: "soon", bundle: "com.example.soon", days: 10)
        let output = folder.path("apnsctl.prom")
        let written = try CLI.run([
            "check", "--format", "prometheus", "--output", output, "--expose-not-before", "--expose-relative-metrics",
            expiring,
        ])
        #expect(written.status == 0, "\(written.stderr)")
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let families = try Monitoring.parse(text)
        for (name, family) in families {
            #expect(family.type == "gauge", "\(name) has # TYPE")
            #expect(!family.help.isEmpty, "\(name) has # HELP")
        }
        #expect(!text.contains("seconds_left"), "no snapshot of the time left: rules compute it with time()")

        let labels = Set(
            ["serial_number", "filename", "filepath"]
                + ["C", "ST", "L", "O", "OU", "CN"].flatMap { ["subject_\($0)", "issuer_\($0)"] }
        )
        for name in [
            "x509_cert_not_after", "x509_cert_not_before", "x509_cert_expired", "x509_cert_expires_in_seconds",
            "x509_cert_valid_since_seconds",
        ] {
            let sample = try #require(Monitoring.samples(families, name).first, "\(name)")
            #expect(Set(sample.labels.keys) == labels, "\(name): \(sample.labels.keys.sorted())")
            #expect(sample.labels["subject_CN"] == "Apple Push Services: com.example.soon")
            #expect(sample.labels["subject_OU"] == "ABCDE12345")
            #expect(sample.labels["issuer_CN"] == "apnsctl TEST Worldwide Developer Relations CA")
            #expect(sample.labels["filepath"] == expiring)
            #expect(sample.labels["filename"] == "soon-bundle.pem")
        }
        // The serial in decimal, as the exporter's Go code prints it.
        let serialHex = try CLI.runProgram("openssl", ["x509", "-in", expiring, "-noout", "-serial"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "serial=", with: "")
        let serial = try #require(Monitoring.samples(families, "x509_cert_not_after").first?.labels["serial_number"])
        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let decimal = try CLI.runProgram(python, ["-c", "import sys; print(int(sys.argv[1], 16))", serialHex])
        #expect(serial == decimal.stdout.trimmingCharacters(in: .whitespacesAndNewlines))

        let notAfter = try #require(Monitoring.samples(families, "x509_cert_not_after").first?.value)
        let expiry = try #require(Monitoring.samples(families, "apnsctl_credential_expiry_timestamp_seconds").first)
        #expect(expiry.value == notAfter)
        #expect(abs(notAfter - Date().timeIntervalSince1970 - 10 * 86400) < 3600)
        let checked = try #require(Monitoring.samples(families, "apnsctl_check_timestamp_seconds").first?.value)
        let expiresIn = try #require(Monitoring.samples(families, "x509_cert_expires_in_seconds").first?.value)
        #expect(abs(expiresIn - (notAfter - checked)) <= 1, "seconds left when the check ran")
        #expect(expiry.labels["app"] == "com.example.soon")
        #expect(Monitoring.samples(families, "x509_cert_expired").first?.value == 0)
        #expect(Monitoring.samples(families, "apnsctl_credential_problem").first?.value == 0, "expiring is no problem")
        #expect(Monitoring.samples(families, "apnsctl_credential_warning").first?.value == 1, "it is a warning")
        #expect(
            Monitoring.samples(families, "apnsctl_app_ready").map(\.labels).contains([
                "app": "com.example.soon", "environment": "production",
            ])
        )
        #expect(Monitoring.samples(families, "apnsctl_check_success").first?.value == 1)
        #expect(Monitoring.samples(families, "apnsctl_check_credentials").first?.value == 1)
    }

    /// A secret removed from the Secret Service behind apnsctl's back is a problem of that
    /// credential (it cannot send until imported again), not a check that could not be made.
    @Test func aMissingSecretIsAProblem() throws {
        let store = try StoreCommandTests.Store()
        let cert = try TestPKI.mint(in: store.folder, name: "gone", bundle: "com.example.gone", days: 300)
        #expect(try store.run(["import", cert]).status == 0)
        let cleared = try StoreCommandTests.secretTool([
            "clear", "application", "apnsctl", "store", store.path, "alias", "com.example.gone-universal",
        ])
        #expect(cleared.status == 0)
        let output = store.folder.path("gone.prom")
        _ = try store.run(["check", "--format", "prometheus", "--output", output])
        let families = try Monitoring.parse(try String(contentsOfFile: output, encoding: .utf8))
        #expect(Monitoring.samples(families, "apnsctl_credential_problem").first?.value == 1)
        #expect(Monitoring.samples(families, "apnsctl_credential_check_error").first?.value == 0)
        #expect(Monitoring.samples(families, "apnsctl_check_success").first?.value == 1)
    }

    /// With no series at all no alert could fire, the staleness one included: an empty store and
    /// an unreadable one still get a file that says so, and the exit status still says what happened.
    @Test func emptyAndUnreadableStoresStillWriteTheFile() throws {
        let folder = try TemporaryFolder()
        let output = folder.path("apnsctl.prom")

        let empty = try CLI.run([
            "check", "--format", "prometheus", "--output", output, "--store", folder.path("empty"),
        ])
        #expect(empty.status == 2, "nothing to check: \(empty.stderr)")
        #expect(empty.stderr.contains("is empty"))
        var families = try Monitoring.parse(try String(contentsOfFile: output, encoding: .utf8))
        #expect(Monitoring.samples(families, "apnsctl_check_success").first?.value == 1, "the store was read")
        #expect(Monitoring.samples(families, "apnsctl_check_credentials").first?.value == 0)
        let timestamp = try #require(Monitoring.samples(families, "apnsctl_check_timestamp_seconds").first?.value)
        #expect(abs(timestamp - Date().timeIntervalSince1970) < 600)

        let damaged = folder.path("damaged")
        try FileManager.default.createDirectory(atPath: damaged + "/credentials", withIntermediateDirectories: true)
        try "{ not json".write(toFile: damaged + "/index.json", atomically: true, encoding: .utf8)
        let unreadable = try CLI.run(["check", "--format", "prometheus", "--output", output, "--store", damaged])
        #expect(unreadable.status == 2, "\(unreadable.stderr)")
        #expect(unreadable.stderr.contains("index.json"))
        families = try Monitoring.parse(try String(contentsOfFile: output, encoding: .utf8))
        #expect(Monitoring.samples(families, "apnsctl_check_success").first?.value == 0)
        #expect(Monitoring.samples(families, "apnsctl_check_credentials").first?.value == 0)
        #expect(Monitoring.samples(families, "apnsctl_check_timestamp_seconds").count == 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path("")).filter { $0.hasSuffix(".tmp") }.isEmpty
        )
    }

    /// The Secret Service out of reach: the file says the check failed, the exit status is 2.
    @Test func anUnreachableSecretServiceIsAFailedCheck() throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [("myapp", "com.example.app", 40, [.sandbox, .production])])
        let output = folder.path("apnsctl.prom")
        let result = try CLI.run(
            ["check", "--format", "prometheus", "--output", output, "--store", store],
            environment: ["XDG_RUNTIME_DIR": folder.path("no-runtime")],
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS"],
            timeout: 30
        )
        #expect(result.status == 2, "\(result.stderr)")
        let families = try Monitoring.parse(try String(contentsOfFile: output, encoding: .utf8))
        #expect(Monitoring.samples(families, "apnsctl_check_success").first?.value == 0)
        #expect(Monitoring.samples(families, "apnsctl_check_credentials").first?.value == 1)
        #expect(Monitoring.samples(families, "x509_cert_not_after").count == 1, "what the files say is still published")
    }
}
