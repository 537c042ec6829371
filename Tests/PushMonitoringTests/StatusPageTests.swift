import CredentialFormats
import Foundation
import PushChecks
import PushStore
import Testing

@testable import PushMonitoring

/// The status page's HTML without a server: text from the store escaped, each app's verdict and
/// expiry, a store that could not be read, and the bounded list of the last probes.
struct StatusPageTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func certificate(
        _ name: String,
        app: String,
        days: Int,
        environments: [PushEnvironment] = [.sandbox, .production],
        findings: [Finding] = []
    ) -> CheckResult {
        var result = CheckResult.failed(
            name: name,
            origin: "store",
            error: CredentialError(.secretNotFound, "placeholder")
        )
        result.error = nil
        result.kind = .certificate
        result.topics = [app]
        result.environments = environments
        result.notAfter = now.addingTimeInterval(Double(days) * 86_400 + 60)
        result.daysLeft = days
        result.findings = findings
        return result
    }

    static let expiring = Finding(code: .expiring, severity: .warning, message: "Expires in 5 days.")

    @Test func textFromTheStoreIsEscapedAndAddsNoMarkup() {
        let hostile = "<script>alert(\"x\")</script>&'\u{1B}[31m"
        let run = CheckRun(
            date: Self.now,
            results: [Self.certificate(hostile, app: "com.example.<b>app</b>", days: 100)],
            secretsAsked: true
        )
        let page = StatusPage.render(store: "/srv/<store>", run: run, probes: [], now: Self.now)
        #expect(!page.contains("<script"), "no script, and no alias's markup")
        #expect(!page.contains("<b>"))
        #expect(page.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;^[[31m"))
        #expect(page.contains("/srv/&lt;store&gt;"))
        // In a link, the alias is percent-encoded first, then escaped.
        #expect(page.contains("/probe?credential=%3Cscript%3Ealert%28%22x%22%29%3C%2Fscript%3E%26%27%1B%5B31m"))
        #expect(!page.unicodeScalars.contains { $0.value == 0x1B }, "no control character reaches the page")
    }

    @Test func eachAppsVerdictWithItsExpiryAndTheExpiringOnesMarked() {
        var broken = Self.certificate("broken", app: "com.example.broken", days: 200)
        broken.findings = [Finding(code: .keyMismatch, severity: .problem, message: "The private key does not belong.")]
        var key = CheckResult.failed(name: "pushkey", origin: "store", error: CredentialError(.secretNotFound, "x"))
        key.error = nil
        key.kind = .tokenKey
        key.topics = ["com.example.keyed"]
        key.environments = [.sandbox, .production]
        let run = CheckRun(
            date: Self.now,
            results: [
                Self.certificate("myapp", app: "com.example.app", days: 300),
                Self.certificate("soon", app: "com.example.soon", days: 5, findings: [Self.expiring]),
                broken, key,
            ],
            secretsAsked: true
        )
        let page = StatusPage.render(store: "/srv/store", run: run, probes: [], now: Self.now)
        func row(_ app: String, _ environment: String) -> String? {
            guard let start = page.range(of: "data-app=\"\(app)\" data-environment=\"\(environment)\"") else {
                return nil
            }
            let opening = page[..<start.lowerBound].range(of: "<tr", options: .backwards)!
            return String(page[opening.lowerBound...].prefix { $0 != "\n" })
        }
        let soon = row("com.example.soon", "production") ?? ""
        #expect(soon.contains("class=\"expiring\"") && soon.contains("expires soon: 5 days left (soon)"), "\(soon)")
        let ready = row("com.example.app", "sandbox") ?? ""
        #expect(ready.contains("class=\"ready\"") && ready.contains("300 days left (myapp)"), "\(ready)")
        let notReady = row("com.example.broken", "production") ?? ""
        #expect(notReady.contains("class=\"not-ready\"") && notReady.contains("not ready"), "\(notReady)")
        let keyed = row("com.example.keyed", "production") ?? ""
        #expect(keyed.contains("a token key serves it: no expiry"), "\(keyed)")
        #expect(page.contains("problem key_mismatch: The private key does not belong."))
        #expect(page.contains("Read at 2027-01-15 08:00:00 UTC: 4 credentials."))
        #expect(page.contains("<a href=\"/metrics\">"))
        #expect(page.contains("<form action=\"/probe\" method=\"get\">"))
    }

    @Test func aStoreThatCouldNotBeReadSaysWhy() {
        let run = CheckRun.failed(at: Self.now, "The store at /srv/store cannot be read: permission denied.")
        let page = StatusPage.render(store: "/srv/store", run: run, probes: [], now: Self.now)
        #expect(page.contains("class=\"not-ready\" id=\"store-state\">Could not be read at 2027-01-15 08:00:00 UTC"))
        #expect(page.contains("permission denied"))
        #expect(page.contains("No app"))
    }

    @Test func theLastTwentyProbesAreListedNewestFirst() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("status-page-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let service = ProbeService(
            store: CredentialStore(root: folder),
            settings: ProbeSettings(minimumInterval: 3600)
        )
        // Aliases the store does not hold: each probe fails at setup, without a connection.
        let aliases = (0..<30).map { "credential\($0)" }
        for alias in aliases {
            _ = await service.probe(ProbeTarget(credential: alias, environment: .sandbox), stored: Set(aliases))
        }
        // A cached answer is not a new probe.
        _ = await service.probe(ProbeTarget(credential: "credential29", environment: .sandbox), stored: Set(aliases))
        let recent = await service.recentResults
        #expect(recent.count == 20)
        #expect(recent.map(\.target.credential) == (10..<30).reversed().map { "credential\($0)" })

        let page = StatusPage.render(
            store: folder.path,
            run: CheckRun(date: Self.now, results: [], secretsAsked: false),
            probes: recent,
            now: Self.now
        )
        #expect(page.components(separatedBy: "<tr class=\"failure\" data-credential=").count == 21)
        #expect(page.contains("failure: not connected"))
        #expect(page.contains("setup "), "the phase that failed, as apnsctl_probe_error names it")
    }
}
