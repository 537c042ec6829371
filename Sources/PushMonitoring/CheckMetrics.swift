import CredentialFormats
import Foundation
import PushChecks
import PushGateway

/// The series of a check: x509-certificate-exporter's family for every certificate judged, so
/// that its rules and dashboards see push certificates, and apnsctl's own series for what only
/// apnsctl knows (problems, warnings, token keys, the per-app verdict, whether the check ran).
public enum CheckMetrics {
    /// The series of a check; `source` is the store's state as an exporter keeps it across reads
    /// (nil: this run's alone, as `check --format prometheus` gives it).
    public static func render(
        _ run: CheckRun,
        x509: X509Exposition = X509Exposition(),
        source: X509SourceStatus? = nil
    ) -> String {
        var out = MetricsText()
        renderStatus(run, into: &out)
        renderX509(run, x509, into: &out)
        if x509.names == .v4, let status = source ?? run.source.map({ _ in X509SourceStatus(run: run) }) {
            renderSource(status, into: &out)
        }
        renderCredentials(run, into: &out)
        renderTokenKeys(run, into: &out)
        renderApps(run, into: &out)
        renderTrustRoots(TrustStoreCheck.systemCached(at: run.date), into: &out)
        return out.text
    }

    /// Whether the system's trust store holds each root of APNs' table (docs/connectivity.md).
    static func renderTrustRoots(_ check: TrustStoreCheck?, into out: inout MetricsText) {
        guard let check else { return }
        out.family(
            "apnsctl_trust_root_present",
            "1 when the system's trust store holds the APNs root (status: current, upcoming or previous), else 0."
        )
        for root in check.roots {
            out.sample(
                "apnsctl_trust_root_present",
                [("root", root.name), ("status", root.role.rawValue)],
                root.present ? 1 : 0
            )
        }
    }

    static func renderStatus(_ run: CheckRun, into out: inout MetricsText) {
        out.family("apnsctl_check_timestamp_seconds", "When the check ran, as a Unix timestamp.")
        out.sample("apnsctl_check_timestamp_seconds", [:], run.date.timeIntervalSince1970.rounded(.down))
        out.family(
            "apnsctl_check_success",
            "1 when the store was read and the Secret Service answered (or was not asked), else 0."
        )
        out.sample("apnsctl_check_success", [:], run.success ? 1 : 0)
        out.family("apnsctl_check_credentials", "Number of credentials the check judged.")
        out.sample("apnsctl_check_credentials", [:], Double(run.results.count))
    }

    /// Labels as x509-certificate-exporter sets them for a certificate file.
    static func x509Labels(_ names: X509Names) -> [(String, String)] {
        var labels: [(String, String)] = [("serial_number", names.serialNumber)]
        for part in X509Names.attributeNames { labels.append(("subject_\(part)", names.subject[part] ?? "")) }
        for part in X509Names.attributeNames { labels.append(("issuer_\(part)", names.issuer[part] ?? "")) }
        labels.append(("filename", (names.filepath as NSString).lastPathComponent))
        labels.append(("filepath", names.filepath))
        return labels
    }

    /// A secret the Secret Service answered it does not have is a finding about the credential (it
    /// cannot be used until imported again), not a check that could not be made.
    static func secretMissing(_ result: CheckResult) -> Bool {
        result.error?.code == .secretNotFound
    }

    /// The environment label: one environment, `both`, or `unknown` when nothing says.
    static func environmentLabel(_ environments: [PushEnvironment]) -> String {
        switch Set(environments) {
        case [.sandbox]: return "sandbox"
        case [.production]: return "production"
        case [.sandbox, .production]: return "both"
        default: return "unknown"
        }
    }

    /// The apps a credential serves, each once, in the order its topics name them: a token key
    /// restricted to several apps serves each of them; a certificate's derived topics (`.voip`...)
    /// are its app's. One empty app when it names none (a token key for the whole team).
    static func apps(_ result: CheckResult) -> [String] {
        var seen = Set<String>()
        let apps = result.topics.map(TopicScope.app(of:)).filter { seen.insert($0).inserted }
        return apps.isEmpty ? [""] : apps
    }

    /// A credential's labels, once per app it serves: its series are published under each app,
    /// so that a problem with a key shared by two apps is seen (and alerted on) as both apps'.
    static func credentialLabels(_ result: CheckResult) -> [[(String, String)]] {
        apps(result).map { app in
            [
                ("credential", result.name), ("kind", result.kind?.rawValue ?? "unknown"), ("app", app),
                ("environment", environmentLabel(result.environments)),
            ]
        }
    }

    static func renderCredentials(_ run: CheckRun, into out: inout MetricsText) {
        out.family(
            "apnsctl_credential_expiry_timestamp_seconds",
            "When the credential's certificate expires, as a Unix timestamp (compute days left with time())."
        )
        for result in run.results {
            guard let notAfter = result.notAfter else { continue }
            for labels in credentialLabels(result) {
                out.sample(
                    "apnsctl_credential_expiry_timestamp_seconds",
                    labels,
                    notAfter.timeIntervalSince1970.rounded(.down)
                )
            }
        }
        out.family(
            "apnsctl_credential_problem",
            "Number of problems found: expired, not yet valid, environment or topic mismatch, key mismatch, secret missing."
        )
        for result in run.results {
            let problems = result.findings.filter { $0.severity == .problem }.count + (secretMissing(result) ? 1 : 0)
            for labels in credentialLabels(result) {
                out.sample("apnsctl_credential_problem", labels, Double(problems))
            }
        }
        out.family(
            "apnsctl_credential_warning",
            "Number of warnings found, such as an expiry within the warning window or a key not verified."
        )
        for result in run.results {
            let warnings = result.findings.filter { $0.severity == .warning }.count
            for labels in credentialLabels(result) {
                out.sample("apnsctl_credential_warning", labels, Double(warnings))
            }
        }
        out.family("apnsctl_credential_check_error", "1 when the credential could not be checked at all, else 0.")
        for result in run.results {
            let couldNotCheck = result.error != nil && !secretMissing(result)
            for labels in credentialLabels(result) {
                out.sample("apnsctl_credential_check_error", labels, couldNotCheck ? 1 : 0)
            }
        }
        out.family("apnsctl_credential_findings", "Findings of each kind for the credential, by severity.")
        for result in run.results {
            var counts: [String: (String, Int)] = [:]
            for finding in result.findings {
                counts[finding.code.rawValue, default: (finding.severity.rawValue, 0)].1 += 1
            }
            if let error = result.error { counts[error.code.name, default: ("error", 0)].1 += 1 }
            for labels in credentialLabels(result) {
                for (code, entry) in counts.sorted(by: { $0.key < $1.key }) {
                    out.sample(
                        "apnsctl_credential_findings",
                        labels + [("finding", code), ("severity", entry.0)],
                        Double(entry.1)
                    )
                }
            }
        }
    }

    static func renderTokenKeys(_ run: CheckRun, into out: inout MetricsText) {
        let keys = run.results.filter { $0.kind == .tokenKey && $0.error == nil }
        out.family(
            "apnsctl_token_key_info",
            "A token key and its scope, one series per app it serves: scope team (every app of the team; app empty) or topics (restricted to its apps, each one series with its app label)."
        )
        for key in keys {
            let scope = key.topics.isEmpty ? "team" : "topics"
            for app in apps(key) {
                let labels = [
                    ("credential", key.name), ("key_id", key.keyID ?? ""), ("team_id", key.teamID ?? ""),
                    ("scope", scope), ("app", app), ("environment", environmentLabel(key.environments)),
                ]
                out.sample("apnsctl_token_key_info", labels, 1)
            }
        }
        guard run.secretsAsked else { return }
        out.family(
            "apnsctl_token_key_secret_reachable",
            "1 when the Secret Service answered for the token key, 0 when it was out of reach or locked."
        )
        for key in keys {
            let unreachable = key.findings.contains { $0.code == .secretUnverified }
            out.sample("apnsctl_token_key_secret_reachable", [("credential", key.name)], unreachable ? 0 : 1)
        }
        out.family(
            "apnsctl_token_key_present",
            "1 when the token key's private key is in the Secret Service, 0 when it is missing."
        )
        for key in keys where !key.findings.contains(where: { $0.code == .secretUnverified }) {
            let missing = key.findings.contains { $0.code == .secretMissing }
            out.sample("apnsctl_token_key_present", [("credential", key.name)], missing ? 0 : 1)
        }
    }

    static func renderApps(_ run: CheckRun, into out: inout MetricsText) {
        out.family(
            "apnsctl_app_ready",
            "1 when at least one credential for the app is fit for the environment, else 0."
        )
        for verdict in run.apps {
            out.sample(
                "apnsctl_app_ready",
                [("app", verdict.app), ("environment", verdict.environment.rawValue)],
                verdict.ready ? 1 : 0
            )
        }
    }
}
