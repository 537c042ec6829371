import Foundation
import PushChecks
import PushGateway

extension StatusPage {
    /// The last probes, newest first: when, what, the verdict, APNs' answer, each phase's time,
    /// and why a probe failed. The made-up device token of the auth check is in none of them.
    static func renderProbes(_ probes: [ProbeResult], into page: inout HTMLText) {
        page.raw("<section id=\"probes\">\n<h2>Last probes</h2>\n")
        guard !probes.isEmpty else {
            page.raw(
                "<p class=\"muted\">No probe yet: Prometheus (or the form below) asks for one at /probe.</p>\n</section>\n"
            )
            return
        }
        page.raw(
            "<table>\n<tr><th>Time</th><th>Credential</th><th>Environment</th><th>Topic</th><th>Result</th><th>Answer</th><th>Phases (ms)</th><th>Error</th></tr>\n"
        )
        for result in probes {
            page.raw("<tr class=\"\(result.success ? "ready" : "failure")\" data-credential=\"")
            page.text(result.target.credential)
            page.raw("\"><td>")
            page.text(timestamp(result.date))
            page.raw("</td><td>")
            page.text(result.target.credential)
            page.raw("</td><td>\(result.target.environment.rawValue)</td><td>")
            page.text(result.target.topic ?? "its default")
            page.raw("</td><td class=\"mark\">")
            page.text(verdict(result))
            page.raw("</td><td>")
            page.text(answer(result))
            page.raw("</td><td>")
            page.text(phases(result))
            page.raw("</td><td>")
            page.text(failure(result) ?? "")
            page.raw("</td></tr>\n")
        }
        page.raw("</table>\n</section>\n")
    }

    /// Success or failure, and the verdict on the credential as `apnsctl_probe_auth_status` has it.
    static func verdict(_ result: ProbeResult) -> String {
        let outcome = result.success ? "success" : "failure"
        guard let check = result.check else { return "\(outcome): not connected" }
        switch check.verdict {
        case .connected: return "\(outcome): connected"
        case .accepted: return "\(outcome): accepted"
        case .rejected: return "\(outcome): rejected"
        case .inconclusive: return "\(outcome): inconclusive"
        case .failed: return "\(outcome): could not connect"
        }
    }

    /// APNs' status and reason, and what they say about the credential.
    static func answer(_ result: ProbeResult) -> String {
        guard let auth = result.check?.authCheck else { return "—" }
        let status = [auth.status.map(String.init), auth.reason].compactMap { $0 }.joined(separator: " ")
        return status.isEmpty ? auth.explanation : "\(status): \(auth.explanation)"
    }

    /// The phases as `probe_http_duration_seconds` names them, in milliseconds.
    static func phases(_ result: ProbeResult) -> String {
        guard let check = result.check else { return "—" }
        let handshake = check.handshake
        let phases: [(String, Double?)] = [
            ("resolve", handshake.dnsDuration),
            ("connect", handshake.tcpConnectDuration.map { $0 + (handshake.proxyConnectDuration ?? 0) }),
            ("tls", handshake.tlsHandshakeDuration),
            ("processing", check.authCheck?.latency),
        ]
        let shown = phases.compactMap { name, seconds in seconds.map { "\(name) \(Int(($0 * 1000).rounded()))" } }
        return shown.isEmpty ? "—" : shown.joined(separator: ", ")
    }

    /// Why the probe got no answer, as `apnsctl_probe_error` names it, with the error's sentence.
    static func failure(_ result: ProbeResult) -> String? {
        if let setup = result.setupError { return "setup \(setup.code.name): \(setup.statement)" }
        guard let error = result.check?.error else { return nil }
        let phase = result.check?.handshake.failedPhase.map { "\($0) " } ?? ""
        return "\(phase)\(error.code.name): \(error.message)"
    }

    /// A form for `/probe` (a GET, no script), and a link per stored credential and environment.
    static func renderProbeForm(_ run: CheckRun, into page: inout HTMLText) {
        let stored = run.results.filter { $0.origin == "store" && $0.kind != nil }
        page.raw("<section id=\"probe\">\n<h2>Probe a credential</h2>\n")
        guard !stored.isEmpty else {
            page.raw("<p class=\"muted\">The store holds no credential to probe.</p>\n</section>\n")
            return
        }
        page.raw("<form action=\"/probe\" method=\"get\">\n<label>Credential <select name=\"credential\">")
        for result in stored {
            page.raw("<option value=\"")
            page.text(result.name)
            page.raw("\">")
            page.text(result.name)
            page.raw("</option>")
        }
        page.raw(
            """
            </select></label>
            <label>Environment <select name="environment"><option value="production">production</option><option value="sandbox">sandbox</option></select></label>
            <label>Topic <input name="topic" placeholder="its default"></label>
            <button type="submit">Probe</button>
            </form>
            <p class="muted">One connection per credential and environment per minimum interval; a probe in between gets the last answer.</p>
            <ul>

            """
        )
        for result in stored {
            for environment in result.environments {
                let path =
                    "/probe?credential=\(HTMLText.queryValue(result.name))&environment=\(environment.rawValue)"
                page.raw("<li><a href=\"")
                page.text(path)
                page.raw("\">")
                page.text(path)
                page.raw("</a></li>\n")
            }
        }
        page.raw("</ul>\n</section>\n")
    }
}
