import Foundation
import PushGateway

/// A probe's answer in blackbox_exporter's names, so that dashboards and alerts built for it read
/// apnsctl's; what only APNs can say (its reason) is in apnsctl's own series.
public enum ProbeMetrics {
    /// blackbox_exporter names TLS versions as Go does.
    static func tlsVersionName(_ version: String) -> String {
        switch version {
        case "TLSv1.3": return "TLS 1.3"
        case "TLSv1.2": return "TLS 1.2"
        case "TLSv1.1": return "TLS 1.1"
        case "TLSv1": return "TLS 1.0"
        default: return version
        }
    }

    public static func render(_ result: ProbeResult, cached: Bool) -> String {
        var out = MetricsText()
        let handshake = result.check?.handshake
        let auth = result.check?.authCheck

        out.family("probe_success", "Displays whether or not the probe was a success")
        out.sample("probe_success", [:], result.success ? 1 : 0)
        out.family("probe_duration_seconds", "Returns how long the probe took to complete in seconds")
        out.sample("probe_duration_seconds", [:], result.duration)
        out.family("probe_http_duration_seconds", "Duration of http request by phase, summed over all redirects")
        let phases: [(String, Double?)] = [
            ("resolve", handshake?.dnsDuration),
            ("connect", (handshake?.tcpConnectDuration).map { $0 + (handshake?.proxyConnectDuration ?? 0) }),
            ("tls", handshake?.tlsHandshakeDuration),
            ("processing", auth?.latency),
        ]
        for (phase, seconds) in phases {
            out.sample("probe_http_duration_seconds", [("phase", phase)], seconds ?? 0)
        }
        if let status = auth?.status {
            out.family("probe_http_status_code", "Response HTTP status code")
            out.sample("probe_http_status_code", [:], Double(status))
            out.family("probe_http_version", "Returns the version of HTTP of the probe response")
            out.sample("probe_http_version", [:], 2)
        }
        if let chain = handshake?.serverCertificates, let earliest = chain.map(\.notAfter).min() {
            out.family(
                "probe_ssl_earliest_cert_expiry",
                "Returns last SSL chain expiry in unixtime"
            )
            out.sample("probe_ssl_earliest_cert_expiry", [:], earliest.timeIntervalSince1970.rounded(.down))
        }
        if let version = handshake?.tlsVersion {
            out.family("probe_tls_version_info", "Returns the TLS version used or NaN when unknown")
            out.sample("probe_tls_version_info", [("version", tlsVersionName(version))], 1)
        }

        out.family(
            "apnsctl_probe_auth_status",
            "The auth check's answer: APNs' HTTP status and reason, and the verdict on the credential."
        )
        if let check = result.check {
            let verdict: String
            switch check.verdict {
            case .connected: verdict = "connected"
            case .accepted: verdict = "accepted"
            case .rejected: verdict = "rejected"
            case .inconclusive: verdict = "inconclusive"
            case .failed: verdict = "failed"
            }
            let reason = auth?.reason ?? ""
            out.sample(
                "apnsctl_probe_auth_status",
                [("verdict", verdict), ("status", auth?.status.map(String.init) ?? ""), ("reason", reason)],
                1
            )
        }
        out.family(
            "apnsctl_probe_error",
            "Why the probe could not get an answer: the failing phase and the error code."
        )
        if let setup = result.setupError {
            out.sample("apnsctl_probe_error", [("phase", "setup"), ("code", setup.code.name)], 1)
        } else if let error = result.check?.error {
            out.sample(
                "apnsctl_probe_error",
                [("phase", handshake?.failedPhase ?? ""), ("code", error.code.name)],
                1
            )
        }
        out.family(
            "apnsctl_probe_cached",
            "1 when this answer is the last probe's, given again within the minimum interval between probes."
        )
        out.sample("apnsctl_probe_cached", [:], cached ? 1 : 0)
        out.family("apnsctl_probe_timestamp_seconds", "When the answered probe connected, as a Unix timestamp.")
        out.sample("apnsctl_probe_timestamp_seconds", [:], result.date.timeIntervalSince1970.rounded(.down))
        return out.text
    }
}
