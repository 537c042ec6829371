import CredentialFormats
import Foundation
import PushCore
import PushStore

/// Something worth telling about a credential. Problems make a command exit 1; warnings do not.
public struct Finding: Codable, Sendable, Equatable {
    public enum Severity: String, Codable, Sendable {
        case problem
        case warning
    }

    public var code: FindingCode
    public var severity: Severity
    public var message: String
    public var hint: String?
    /// The code of the error that stopped the check short (why a secret was not verified), so
    /// that a front end decides its advice on a value; not part of the JSON.
    public var cause: ErrorCode?

    private enum CodingKeys: String, CodingKey { case code, severity, message, hint }

    public init(code: FindingCode, severity: Severity, message: String, hint: String? = nil, cause: ErrorCode? = nil) {
        self.code = code
        self.severity = severity
        self.message = message
        self.hint = hint
        self.cause = cause
    }
}

/// A certificate as reported.
public struct CertificateReport: Codable, Sendable {
    public struct PublicKey: Codable, Sendable {
        public var type: String
        public var bits: Int
    }

    public var subject: String
    public var commonName: String?
    public var bundleId: String?
    public var teamID: String?
    public var organization: String?
    public var issuer: String
    public var wwdrGeneration: String?
    public var serial: String
    public var signatureAlgorithm: String
    public var publicKey: PublicKey
    public var kind: PushCertificateKind
    public var isPushCertificate: Bool
    public var environments: [PushEnvironment]
    public var environmentSource: EnvironmentSource
    public var topics: [PushTopic]
    public var notBefore: Date
    public var notAfter: Date
    public var daysLeft: Int
    public var status: ValidityStatus
    public var sha256: String
    public var sha1: String

    enum CodingKeys: String, CodingKey {
        case subject, commonName, bundleId
        // `team_id` in the report: see ReportSchema for the acronym's raw value.
        case teamID = "teamId"
        case organization, issuer, wwdrGeneration, serial
        case signatureAlgorithm, publicKey, kind, isPushCertificate, environments, environmentSource
        case topics, notBefore, notAfter, daysLeft, status, sha256, sha1
    }

    public init(_ certificate: PushCertificate, at date: Date, warnDays: Int) {
        subject = certificate.subject
        commonName = certificate.commonName
        bundleId = certificate.bundleID
        teamID = certificate.teamID
        organization = certificate.organization
        issuer = certificate.issuer
        wwdrGeneration = certificate.wwdrGeneration
        serial = certificate.serialNumber
        signatureAlgorithm = certificate.signatureAlgorithm
        publicKey = PublicKey(type: certificate.publicKeyType, bits: certificate.publicKeyBits)
        kind = certificate.kind
        isPushCertificate = certificate.isPushCertificate
        environments = certificate.environments
        environmentSource = certificate.environmentSource
        topics = certificate.topics
        notBefore = certificate.notBefore
        notAfter = certificate.notAfter
        daysLeft = certificate.daysLeft(at: date)
        status = certificate.status(at: date, warnDays: warnDays)
        sha256 = certificate.sha256
        sha1 = certificate.sha1
    }
}

/// One file as `inspect` reports it: its certificate, the rest of its chain, its key and
/// protection, and the findings; or the error that stopped it from being read.
public struct FileReport: Encodable, Sendable {
    public var path: String
    public var format: CredentialFile.Format?
    public var protection: PKCS12Protection?
    public var certificate: CertificateReport?
    public var chain: [CertificateReport]
    public var privateKey: PrivateKeySummary?
    /// Set for a token key file (.p8), which holds no certificate.
    public var tokenKey: TokenKeyReport?
    public var findings: [Finding]
    /// Why the file could not be read, typed; the JSON report gives its code, message and hint.
    public var error: CredentialError?

    public init(_ file: CredentialFile, at date: Date, warnDays: Int) {
        path = file.path
        format = file.format
        protection = file.protection
        certificate = CertificateReport(file.certificate, at: date, warnDays: warnDays)
        chain = file.chain.map { CertificateReport($0, at: date, warnDays: warnDays) }
        privateKey = file.privateKey
        findings = CertificateFindings.evaluate(file, at: date, warnDays: warnDays)
    }

    public init(path: String, error: CredentialError) {
        self.path = path
        chain = []
        findings = []
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case path, format, protection, certificate, chain, privateKey, tokenKey, findings, error
    }

    /// The report's JSON, where ``error`` becomes its ``ReportedError`` shape: the message without
    /// the path, which the report gives beside it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(protection, forKey: .protection)
        try container.encodeIfPresent(certificate, forKey: .certificate)
        try container.encode(chain, forKey: .chain)
        try container.encodeIfPresent(privateKey, forKey: .privateKey)
        try container.encodeIfPresent(tokenKey, forKey: .tokenKey)
        try container.encode(findings, forKey: .findings)
        try container.encodeIfPresent(
            error.map { ReportedError(code: $0.code.name, message: $0.message, hint: $0.hint) },
            forKey: .error
        )
    }

    /// Problems, and certificates about to expire: a warning, but one that must fail a CI job in time.
    public var hasProblem: Bool { findings.contains { $0.severity == .problem || $0.code == .expiring } }

    /// What the exit status reports (the same as ``hasProblem``).
    public var needsAttention: Bool { hasProblem }
}

/// The findings that follow from a certificate file alone (no expectations about environment
/// or topic; `check` adds those).
public enum CertificateFindings {
    public static func evaluate(_ file: CredentialFile, at date: Date, warnDays: Int) -> [Finding] {
        var findings = validity(file.certificate, at: date, warnDays: warnDays)
        if let key = file.privateKey, !key.matchesCertificate {
            findings.append(
                Finding(
                    code: .keyMismatch,
                    severity: .problem,
                    message: "The private key does not belong to this certificate.",
                    hint:
                        "Export the certificate together with its own key; the key here belongs to another certificate."
                )
            )
        }
        if !file.certificate.isPushCertificate {
            findings.append(
                Finding(
                    code: .notPushCertificate,
                    severity: .warning,
                    message:
                        "This is not an Apple push certificate: it has no Apple push extension and no push common name.",
                    hint:
                        "APNs will refuse it; use the certificate created under Certificates, Identifiers & Profiles > Apple Push Notification service."
                )
            )
        } else if file.certificate.environments.isEmpty {
            findings.append(
                Finding(
                    code: .environmentUnknown,
                    severity: .warning,
                    message:
                        "Neither Apple's extensions nor the common name say which APNs environment this certificate is for.",
                    hint: "Try it against both environments with an auth check."
                )
            )
        }
        return findings
    }

    public static func validity(_ certificate: PushCertificate, at date: Date, warnDays: Int) -> [Finding] {
        let days = certificate.daysLeft(at: date)
        switch certificate.status(at: date, warnDays: warnDays) {
        case .valid:
            return []
        case .expiring:
            return [
                Finding(
                    code: .expiring,
                    severity: .warning,
                    message:
                        "Expires in \(days) day\(days == 1 ? "" : "s") (\(Self.day(certificate.notAfter))), within the \(warnDays)-day warning window.",
                    hint:
                        "Create a new certificate in the Apple Developer portal now and import it as the replacement of this one."
                )
            ]
        case .expired:
            return [
                Finding(
                    code: .expired,
                    severity: .problem,
                    message: days == 0
                        ? "Expired less than a day ago (\(Self.day(certificate.notAfter)))."
                        : "Expired \(-days) day\(days == -1 ? "" : "s") ago (\(Self.day(certificate.notAfter))).",
                    hint: "APNs rejects expired certificates: create a new one in the Apple Developer portal."
                )
            ]
        case .notYetValid:
            return [
                Finding(
                    code: .notYetValid,
                    severity: .problem,
                    message: "Not valid until \(Self.day(certificate.notBefore)).",
                    hint: "Check this machine's clock, or wait until the certificate's start date."
                )
            ]
        }
    }

    static func day(_ date: Date) -> String { MessageDate.day(date) }
}
