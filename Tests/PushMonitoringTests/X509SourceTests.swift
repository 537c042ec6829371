import CredentialFormats
import Foundation
import PushChecks
import Testing

@testable import PushMonitoring
@testable import PushStore

/// x509-certificate-exporter v4's per-source series, and the exporter's read of its store kept
/// for the refresh interval: one read per interval, counters kept across reads, the last good
/// read's series kept while the store cannot be read.
struct X509SourceTests {
    /// The samples of `name` in `text`, by their labels' text.
    static func samples(_ text: String, _ name: String) -> [String: String] {
        var found: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            let parts = line.split(separator: " ")
            found[String(parts.dropLast().joined(separator: " ").dropFirst(name.count))] = String(parts.last ?? "")
        }
        return found
    }

    static func failedRun(_ codes: [ErrorCode], secretsAsked: Bool = true) -> CheckRun {
        let results = codes.enumerated().map { index, code in
            var result = CheckResult.failed(name: "c\(index)", origin: "store", error: CredentialError(code, "x"))
            result.kind = .certificate
            return result
        }
        var run = CheckRun(date: Date(), results: results, secretsAsked: secretsAsked, apps: [])
        run.source = X509Source(kind: "vault", name: "vault:secret/apnsctl")
        return run
    }

    @Test func eachCredentialThatCannotBeReadIsCountedUnderTheExportersReason() {
        let run = Self.failedRun([.wrongPassword, .fileNotFound, .corrupt, .secretNotFound, .unreadable])
        let text = CheckMetrics.render(run)
        let errors = Self.samples(text, "x509_source_errors_total")
        let labels = #"{source_kind="vault",source_name="vault:secret/apnsctl",reason=""#
        #expect(errors[labels + #"bad_passphrase"}"#] == "1", "\(errors)")
        #expect(errors[labels + #"not_found"}"#] == "1")
        #expect(errors[labels + #"bad_pkcs12"}"#] == "1", "a bundle read with its password")
        #expect(errors[labels + #"read_failed"}"#] == "1")
        #expect(errors[labels + #"bad_pem"}"#] == "0", "a missing secret is a finding, not a read error")
        #expect(Set(errors.keys.map { $0.components(separatedBy: "reason=").last! }).count == X509Reason.all.count)
        #expect(text.contains("# TYPE x509_source_errors_total counter"))
        #expect(text.contains(#"x509_pkcs12_passphrase_failures_total{source_name="vault:secret/apnsctl"} 1"#))
        #expect(text.contains(#"x509_source_up{source_kind="vault",source_name="vault:secret/apnsctl"} 1"#))
        #expect(!text.contains("x509_read_errors"), "version 4 has no x509_read_errors")
        #expect(!text.contains("x509_cert_not_before"), "off by default in version 4")
        // Without the secrets, a certificate is read from its PEM.
        let pem = Self.samples(
            CheckMetrics.render(Self.failedRun([.corrupt], secretsAsked: false)),
            "x509_source_errors_total"
        )
        #expect(pem[labels + #"bad_pem"}"#] == "1")
    }

    @Test func version3GivesReadErrorsAndNoSourceSeries() {
        let text = CheckMetrics.render(
            Self.failedRun([.wrongPassword, .fileNotFound]),
            x509: X509Exposition(names: .v3)
        )
        #expect(text.contains("\nx509_read_errors 2\n"), "\(text)")
        #expect(!text.contains("x509_source_"), "\(text)")
        #expect(!text.contains("x509_pkcs12_passphrase_failures_total"))
    }

    @Test func aCertificateThatCannotBeReadHasItsErrorSeriesWhenAsked() {
        var run = Self.failedRun([.corrupt])
        run.certificatePaths = ["c0": "/store/credentials/c0.cert.pem"]
        #expect(!CheckMetrics.render(run).contains("x509_cert_error"), "off by default")
        let text = CheckMetrics.render(run, x509: X509Exposition(perCertificateError: true))
        let errors = Self.samples(text, "x509_cert_error")
        #expect(errors.count == 1, "\(errors)")
        let labels = errors.keys.first ?? ""
        #expect(labels.contains(#"filename="c0.cert.pem",filepath="/store/credentials/c0.cert.pem""#), "\(labels)")
        #expect(labels.contains(#"serial_number="""#) && errors.values.first == "1")
    }

    /// A store folder that can be made unreadable (a damaged index) and readable again.
    struct Folder {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("x509-source-\(UUID().uuidString)")
        var store: CredentialStore { CredentialStore(root: root) }

        func damage() throws {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Data("not an index".utf8).write(to: root.appendingPathComponent("index.json"))
        }

        func repair() { try? FileManager.default.removeItem(at: root) }
    }

    @Test func scrapesWithinTheIntervalAreServedFromOneRead() async throws {
        let folder = Folder()
        defer { folder.repair() }
        let cache = CheckCache(check: StoreCheck(store: folder.store, skipSecrets: true), interval: 3600)
        #expect(await !cache.ready, "not ready before the first read")
        let start = Date()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { _ = await cache.snapshot(now: start.addingTimeInterval(Double(index))) }
            }
        }
        #expect(await cache.reads == 1, "twenty scrapes at once and within the interval: one read")
        #expect(await cache.ready)
        _ = await cache.current(now: start.addingTimeInterval(3601))
        #expect(await cache.reads == 2, "one more once the interval has passed")
    }

    @Test func aFailedReadDropsUpToZeroCountsItAndKeepsTheLastGoodSeries() async throws {
        let folder = Folder()
        defer { folder.repair() }
        let cache = CheckCache(check: StoreCheck(store: folder.store, skipSecrets: true), interval: 0)
        let good = await cache.snapshot()
        #expect(good.source.up && good.run.failure == nil)
        try folder.damage()
        let first = await cache.snapshot()
        let second = await cache.snapshot()
        #expect(!second.source.up)
        #expect(first.source.errors[X509Reason.readFailed] == 1)
        #expect(second.source.errors[X509Reason.readFailed] == 2, "a counter: each failed read adds one")
        #expect(second.run.failure != nil && !second.run.success)
        #expect(second.run.date == good.run.date, "the last good read's time, so the staleness alert can fire")
        #expect(await cache.ready, "ready once read, whatever came after")
        folder.repair()
        let again = await cache.snapshot()
        #expect(again.source.up && again.run.success)
        #expect(again.source.errors[X509Reason.readFailed] == 2, "kept across reads")
        let text = CheckMetrics.render(again.run, source: again.source)
        #expect(text.contains(#"reason="read_failed"} 2"#), "\(text)")
    }

    @Test func aStoreNeverReadIsNotReadyAndItsProbesAreRefused() async throws {
        let folder = Folder()
        try folder.damage()
        defer { folder.repair() }
        let cache = CheckCache(check: StoreCheck(store: folder.store, skipSecrets: true), interval: 60)
        let probes = ProbeService(store: folder.store, settings: ProbeSettings(), index: { await cache.index() })
        await #expect(throws: MonitoringError.self) {
            _ = try await probes.answer([("credential", "app"), ("environment", "sandbox")])
        }
        #expect(await !cache.ready)
        #expect(await cache.reads == 1, "the probe and the cache shared the read")
    }
}
