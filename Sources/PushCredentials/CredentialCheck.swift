import Foundation

/// What the user is about to do, against which credentials are checked.
public struct CheckExpectations: Sendable {
    public var date: Date
    public var warnDays: Int
    /// The environment about to be deployed against.
    public var environment: PushEnvironment?
    /// The app about to be pushed to.
    public var topic: String?

    public init(date: Date = Date(), warnDays: Int = 30, environment: PushEnvironment? = nil, topic: String? = nil) {
        self.date = date
        self.warnDays = warnDays
        self.environment = environment
        self.topic = topic
    }
}

/// The result of checking one credential.
///
/// In JSON the name is `credential` and the topics are objects with their kinds, as in every
/// report of the project.
public struct CheckResult: Encodable, Sendable {
    public var name: String
    /// "store" for an alias, "file" for a file given on the command line.
    public var origin: String
    public var kind: StoredCredential.Kind?
    public var topics: [String]
    public var environments: [PushEnvironment]
    public var notAfter: Date?
    public var daysLeft: Int?
    public var status: ValidityStatus?
    public var sha256: String?
    public var keyId: String?
    public var teamId: String?
    /// Token keys: the curve (always P-256) and the SHA-256 of the public key.
    public var curve: String?
    public var publicKeySha256: String?
    public var findings: [Finding]
    /// Set when the credential could not be checked at all.
    public var error: FileReport.ErrorReport?

    public var ok: Bool { findings.isEmpty && error == nil }

    /// Fit for use: it could be checked and nothing found is a problem (warnings, such as an
    /// expiry within the warning window, leave it usable).
    public var fit: Bool { error == nil && !findings.contains { $0.severity == .problem } }

    enum CodingKeys: String, CodingKey {
        case name = "credential"
        case origin, kind, topics, environments, notAfter, daysLeft, status, sha256, keyId, teamId, curve
        case publicKeySha256, findings, error
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(origin, forKey: .origin)
        try container.encodeIfPresent(kind, forKey: .kind)
        try container.encode(PushTopic.described(topics), forKey: .topics)
        try container.encode(environments, forKey: .environments)
        try container.encodeIfPresent(notAfter, forKey: .notAfter)
        try container.encodeIfPresent(daysLeft, forKey: .daysLeft)
        try container.encodeIfPresent(status, forKey: .status)
        try container.encodeIfPresent(sha256, forKey: .sha256)
        try container.encodeIfPresent(keyId, forKey: .keyId)
        try container.encodeIfPresent(teamId, forKey: .teamId)
        try container.encodeIfPresent(curve, forKey: .curve)
        try container.encodeIfPresent(publicKeySha256, forKey: .publicKeySha256)
        try container.encode(findings, forKey: .findings)
        try container.encodeIfPresent(error, forKey: .error)
    }

    /// A credential that could not be checked.
    public static func failed(name: String, origin: String, error: CredentialError) -> CheckResult {
        CheckResult(
            name: name,
            origin: origin,
            topics: [],
            environments: [],
            findings: [],
            error: FileReport.ErrorReport(code: error.code.name, message: error.message, hint: error.hint)
        )
    }
}

/// Checks certificates and token keys against expectations. Every finding says what to do.
public enum CredentialCheck {
    public static func certificate(
        _ file: CredentialFile,
        name: String,
        origin: String,
        keyVerified: Bool,
        expectations: CheckExpectations
    ) -> CheckResult {
        let certificate = file.certificate
        var findings = CertificateFindings.validity(certificate, at: expectations.date, warnDays: expectations.warnDays)
        if keyVerified, let key = file.privateKey, !key.matchesCertificate {
            findings.append(
                Finding(
                    code: "key_mismatch",
                    severity: .problem,
                    message: "The private key does not belong to the certificate.",
                    hint: "Re-import the certificate with its own key."
                )
            )
        }
        if !certificate.isPushCertificate {
            findings.append(
                Finding(
                    code: "not_push_certificate",
                    severity: .problem,
                    message: "This is not an Apple push certificate.",
                    hint:
                        "Use the certificate created for the Apple Push Notification service in the Apple Developer portal."
                )
            )
        }
        findings += environmentFindings(
            certificate.environments,
            expected: expectations.environment,
            what: "certificate"
        )
        if let topic = expectations.topic, !certificate.covers(topic: topic) {
            let covered = certificate.coveredTopics
            findings.append(
                Finding(
                    code: "topic_not_covered",
                    severity: .problem,
                    message:
                        "The certificate does not cover the topic \(topic); it covers \(covered.isEmpty ? "no topic" : covered.joined(separator: ", ")).",
                    hint:
                        "APNs would answer TopicDisallowed or DeviceTokenNotForTopic: use the certificate made for \(topic)'s App ID."
                )
            )
        }
        return CheckResult(
            name: name,
            origin: origin,
            kind: .certificate,
            topics: certificate.coveredTopics,
            environments: certificate.environments,
            notAfter: certificate.notAfter,
            daysLeft: certificate.daysLeft(at: expectations.date),
            status: certificate.status(at: expectations.date, warnDays: expectations.warnDays),
            sha256: certificate.sha256,
            teamId: certificate.teamID,
            findings: findings
        )
    }

    public static func environmentFindings(
        _ environments: [PushEnvironment],
        expected: PushEnvironment?,
        what: String
    ) -> [Finding] {
        guard let expected else { return [] }
        if environments.isEmpty {
            return [
                Finding(
                    code: "environment_unknown",
                    severity: .problem,
                    message:
                        "Nothing says which environment this \(what) is for, so it cannot be confirmed for \(expected).",
                    hint: "Confirm with an auth check against \(expected)."
                )
            ]
        }
        if !environments.contains(expected) {
            let other = environments.map(\.rawValue).joined(separator: " and ")
            return [
                Finding(
                    code: "environment_mismatch",
                    severity: .problem,
                    message: "The \(what) is for \(other) only, but you are deploying against \(expected).",
                    hint: expected == .production
                        ? "APNs would answer 403 BadCertificateEnvironment: create a production (or \"Sandbox & Production\") certificate."
                        : "APNs would answer 403 BadCertificateEnvironment: use a sandbox (development) or universal certificate."
                )
            ]
        }
        return []
    }
}

/// node_exporter textfile-collector output (Prometheus text exposition format 0.0.4).
public enum PrometheusExport {
    public static func render(_ results: [CheckResult], at date: Date) -> String {
        var lines: [String] = []
        func family(_ name: String, _ help: String) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) gauge")
        }
        func labels(_ result: CheckResult) -> String {
            let environment: String
            switch Set(result.environments) {
            case [.sandbox]: environment = "sandbox"
            case [.production]: environment = "production"
            case [.sandbox, .production]: environment = "both"
            default: environment = "unknown"
            }
            let pairs = [
                ("credential", result.name), ("kind", result.kind?.rawValue ?? "unknown"),
                ("topic", result.topics.first ?? ""), ("environment", environment),
            ]
            return "{" + pairs.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        let dated = results.filter { $0.notAfter != nil }
        family(
            "apnsctl_credential_expiry_timestamp_seconds",
            "When the credential's certificate expires, as a Unix timestamp."
        )
        for result in dated {
            lines.append(
                "apnsctl_credential_expiry_timestamp_seconds\(labels(result)) \(Int(result.notAfter!.timeIntervalSince1970))"
            )
        }
        family(
            "apnsctl_credential_seconds_left",
            "Seconds until the credential's certificate expires (negative once expired)."
        )
        for result in dated {
            lines.append(
                "apnsctl_credential_seconds_left\(labels(result)) \(Int(result.notAfter!.timeIntervalSince(date)))"
            )
        }
        family(
            "apnsctl_credential_problem",
            "1 when the check found a problem with the credential (or could not check it), else 0."
        )
        for result in results { lines.append("apnsctl_credential_problem\(labels(result)) \(result.ok ? 0 : 1)") }
        family("apnsctl_credential_findings", "Number of findings of each kind for the credential.")
        for result in results {
            var counts: [String: Int] = [:]
            for finding in result.findings { counts[finding.code, default: 0] += 1 }
            if let error = result.error { counts[error.code, default: 0] += 1 }
            for (code, count) in counts.sorted(by: { $0.key < $1.key }) {
                let base = labels(result)
                lines.append("apnsctl_credential_findings\(base.dropLast()),finding=\"\(escape(code))\"} \(count)")
            }
        }
        family("apnsctl_check_timestamp_seconds", "When this check ran, as a Unix timestamp.")
        lines.append("apnsctl_check_timestamp_seconds \(Int(date.timeIntervalSince1970))")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Label values escape backslash, double quote and newline; other control characters (a CR or
    /// ESC in a certificate's subject) would make a scraper reject the whole file, so they are
    /// shown in caret notation first.
    static func escape(_ value: String) -> String {
        Untrusted.display(value).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
            of: "\"",
            with: "\\\""
        )
        .replacingOccurrences(of: "\n", with: "\\n")
    }
}
