import CredentialFormats
import Foundation
import PushStore

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
    public var keyID: String?
    public var teamID: String?
    /// Token keys: the curve (always P-256) and the SHA-256 of the public key.
    public var curve: String?
    public var publicKeySha256: String?
    public var findings: [Finding]
    /// Set when the credential could not be checked at all, typed: what a program decides on (by
    /// its code, never by its text) and what a front end words its own hint from. The JSON
    /// report gives its code, message and hint.
    public var error: CredentialError?
    /// A certificate's names and validity for the metrics (not in the JSON report).
    public var x509: X509Names? = nil
    /// The topic the credential was judged against, when one was asked about (not in the JSON report).
    public var expectedTopic: String? = nil

    public var ok: Bool { findings.isEmpty && error == nil }

    /// Fit for use: it could be checked and nothing found is a problem (warnings, such as an
    /// expiry within the warning window, leave it usable).
    public var fit: Bool { error == nil && !findings.contains { $0.severity == .problem } }

    enum CodingKeys: String, CodingKey {
        case name = "credential"
        case origin, kind, topics, environments, notAfter, daysLeft, status, sha256, curve
        // Acronym raw values spelled as ReportSchema requires (`key_id`, `team_id`).
        case keyID = "keyId"
        case teamID = "teamId"
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
        try container.encodeIfPresent(keyID, forKey: .keyID)
        try container.encodeIfPresent(teamID, forKey: .teamID)
        try container.encodeIfPresent(curve, forKey: .curve)
        try container.encodeIfPresent(publicKeySha256, forKey: .publicKeySha256)
        try container.encode(findings, forKey: .findings)
        try container.encodeIfPresent(
            error.map { ReportedError(code: $0.code.name, message: $0.message, hint: $0.hint) },
            forKey: .error
        )
    }

    /// A credential that could not be checked.
    public static func failed(name: String, origin: String, error: CredentialError) -> CheckResult {
        CheckResult(name: name, origin: origin, topics: [], environments: [], findings: [], error: error)
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
                    code: .keyMismatch,
                    severity: .problem,
                    message: "The private key does not belong to the certificate.",
                    hint: "Re-import the certificate with its own key."
                )
            )
        }
        if !certificate.isPushCertificate {
            findings.append(
                Finding(
                    code: .notPushCertificate,
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
                    code: .topicNotCovered,
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
            teamID: certificate.teamID,
            findings: findings,
            x509: X509Names(certificate)
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
                    code: .environmentUnknown,
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
                    code: .environmentMismatch,
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
