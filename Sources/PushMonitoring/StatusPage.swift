import Foundation
import PushChecks
import PushStore

/// The exporter's page at `/`, as blackbox_exporter and x509-certificate-exporter serve one: the
/// store and whether it was read, each app's verdict per environment with the days left, the
/// credentials and their findings, the last probes with their phases and answers, and a form for
/// a probe. Plain HTML with inline CSS, readable without JavaScript; every text from the store,
/// a certificate or a gateway is escaped. It shows what `/metrics` and `/probe` show, nothing more:
/// no secret, and no device token (a probe's made-up token is never kept).
public enum StatusPage {
    public static let contentType = "text/html; charset=utf-8"

    /// The page for a check of the store at `store` (its path or location as the user named it)
    /// and the last probes, newest first.
    public static func render(store: String, run: CheckRun, probes: [ProbeResult], now: Date = Date()) -> String {
        var page = HTMLText()
        page.raw(
            """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>apnsctl status</title>
            <style>\(style)</style>
            </head>
            <body>
            <h1>apnsctl status</h1>
            <nav><a href="/metrics">Metrics</a> · <a href="#probe">Probe a credential</a></nav>

            """
        )
        renderStore(store, run, into: &page)
        renderApps(run, into: &page)
        renderCredentials(run, into: &page)
        renderProbes(probes, into: &page)
        renderProbeForm(run, into: &page)
        page.raw("<footer>Page made at \(HTMLText.escape(timestamp(now))).</footer>\n</body>\n</html>\n")
        return page.text
    }

    static let style = """
        body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:80em}\
        table{border-collapse:collapse;margin:.5em 0 1.5em}\
        th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}\
        th{background:#f3f3f3}.ready{background:#e8f6e8}.not-ready,.failure{background:#fbe4e4}\
        .expiring{background:#fff3cd}.mark{font-weight:bold}.muted{color:#666}\
        code{font-size:.95em}footer{color:#666;font-size:.9em}
        """

    /// A date as the page shows it: UTC, to the second.
    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }

    static func renderStore(_ store: String, _ run: CheckRun, into page: inout HTMLText) {
        page.raw("<section id=\"store\">\n<h2>Store</h2>\n<p>")
        page.text(store)
        page.raw("</p>\n<p class=\"\(run.failure == nil ? "ready" : "not-ready")\" id=\"store-state\">")
        if let failure = run.failure {
            page.text("Could not be read at \(timestamp(run.date)): \(failure)")
        } else {
            let count = run.results.count
            page.text("Read at \(timestamp(run.date)): \(count) credential\(count == 1 ? "" : "s").")
            if !run.secretsAsked {
                page.text(" The Secret Service was not asked (--skip-secrets).")
            } else if run.secretServiceUnreachable {
                page.text(" The Secret Service was out of reach: the secrets were not verified.")
            }
        }
        page.raw("</p>\n</section>\n")
    }

    static func renderApps(_ run: CheckRun, into page: inout HTMLText) {
        page.raw("<section id=\"apps\">\n<h2>Apps</h2>\n")
        guard !run.apps.isEmpty else {
            page.raw("<p class=\"muted\">No app: the store holds no credential for one.</p>\n</section>\n")
            return
        }
        page.raw(
            "<table>\n<tr><th>App</th><th>Environment</th><th>Verdict</th><th>Expiry</th><th>Fit credentials</th></tr>\n"
        )
        let results = Dictionary(run.results.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for app in run.apps {
            let expiry = AppExpiry(app, results: results)
            let rowClass = !app.ready ? "not-ready" : expiry.expiring ? "expiring" : "ready"
            page.raw("<tr class=\"\(rowClass)\" data-app=\"")
            page.text(app.app)
            page.raw("\" data-environment=\"\(app.environment.rawValue)\"><td>")
            page.text(app.app)
            page.raw("</td><td>\(app.environment.rawValue)</td><td class=\"mark\">")
            page.text(app.ready ? "ready" : "not ready")
            page.raw("</td><td>")
            page.text(expiry.description(ready: app.ready))
            page.raw("</td><td>")
            page.text(app.fit.isEmpty ? "none: see the credentials below" : app.fit.joined(separator: ", "))
            page.raw("</td></tr>\n")
        }
        page.raw("</table>\n</section>\n")
    }

    static func renderCredentials(_ run: CheckRun, into page: inout HTMLText) {
        page.raw("<section id=\"credentials\">\n<h2>Credentials</h2>\n")
        guard !run.results.isEmpty else {
            page.raw("<p class=\"muted\">None.</p>\n</section>\n")
            return
        }
        page.raw(
            "<table>\n<tr><th>Credential</th><th>Kind</th><th>Apps</th><th>Environments</th><th>Expires</th><th>Findings</th></tr>\n"
        )
        for result in run.results {
            let problem = result.error != nil || result.findings.contains { $0.severity == .problem }
            let warning = result.findings.contains { $0.severity == .warning }
            page.raw("<tr class=\"\(problem ? "not-ready" : warning ? "expiring" : "ready")\"><td>")
            page.text(result.name)
            page.raw("</td><td>")
            page.text(result.kind.map { $0 == .tokenKey ? "token key" : "certificate" } ?? "")
            page.raw("</td><td>")
            let apps = Array(Set(result.topics.map(TopicScope.app(of:)))).sorted()
            page.text(
                apps.isEmpty ? (result.kind == .tokenKey ? "every app of its team" : "") : apps.joined(separator: ", ")
            )
            page.raw("</td><td>")
            page.text(result.environments.map(\.rawValue).joined(separator: ", "))
            page.raw("</td><td>")
            if let notAfter = result.notAfter {
                page.text(timestamp(notAfter))
                if let days = result.daysLeft { page.text(" (\(days) day\(abs(days) == 1 ? "" : "s") left)") }
            } else {
                page.text(result.kind == .tokenKey ? "does not expire" : "")
            }
            page.raw("</td><td>")
            var lines = result.findings.map { "\($0.severity.rawValue) \($0.code.rawValue): \($0.message)" }
            if let error = result.error { lines.append("error \(error.code.name): \(error.message)") }
            page.text(lines.isEmpty ? "none" : "")
            for (index, line) in lines.enumerated() {
                if index > 0 { page.raw("<br>") }
                page.text(line)
            }
            page.raw("</td></tr>\n")
        }
        page.raw("</table>\n</section>\n")
    }
}

/// When an app stops being ready for want of a valid certificate: the latest expiry among its
/// fit credentials, none when a token key (which does not expire) serves it.
struct AppExpiry {
    var latest: CheckResult?
    var servedByTokenKey: Bool

    init(_ app: AppReadiness, results: [String: CheckResult]) {
        let fit = app.fit.compactMap { results[$0] }
        servedByTokenKey = fit.contains { $0.notAfter == nil }
        latest =
            fit.compactMap { result in result.notAfter.map { (result, $0) } }.max { $0.1 < $1.1 }?.0
    }

    /// Its latest certificate is within the check's warning window (its `expiring` finding),
    /// and no token key serves the app meanwhile.
    var expiring: Bool {
        !servedByTokenKey && latest?.findings.contains { $0.code == .expiring } == true
    }

    func description(ready: Bool) -> String {
        guard ready else { return "—" }
        if servedByTokenKey { return "a token key serves it: no expiry" }
        guard let latest, let days = latest.daysLeft else { return "—" }
        let left = "\(days) day\(abs(days) == 1 ? "" : "s") left"
        return expiring ? "expires soon: \(left) (\(latest.name))" : "\(left) (\(latest.name))"
    }
}
