import CredentialFormats
import Foundation
import PushGateway
import PushStore

/// The check a deploy runs for each credential: the findings for the environment and topic,
/// a handshake, and an auth check, judged as one verdict: ready or not.
public struct PreflightCheck: Sendable {
    /// The environment being deployed against.
    public var environment: PushEnvironment
    /// The topic about to be pushed to; nil: each credential's own.
    public var topic: String?
    public var warnDays: Int
    /// How to reach the gateway (its ``ConnectionSettings/environment`` is ignored: ``environment`` is used).
    public var settings: ConnectionSettings
    /// The date validity is judged at.
    public var date: Date

    public init(
        environment: PushEnvironment,
        topic: String? = nil,
        warnDays: Int = 30,
        settings: ConnectionSettings,
        date: Date = Date()
    ) {
        self.environment = environment
        self.topic = topic
        self.warnDays = warnDays
        self.settings = settings
        self.date = date
    }

    /// Findings that would make a deploy fail; the others are reported but do not block.
    public static let blockingCodes: Set<FindingCode> = [
        .expired, .notYetValid, .environmentMismatch, .topicNotCovered, .keyMismatch, .notPushCertificate,
    ]

    /// A stored token key that records no topics or environments is a problem for `check` too,
    /// so that both commands call the same credentials fit; for a key file it is only a warning.
    public static func isBlocking(_ finding: Finding) -> Bool {
        blockingCodes.contains(finding.code)
            || (finding.code == .tokenMetadataIncomplete && finding.severity == .problem)
    }

    /// A report's error as its JSON gives it (and the command line prints it): a credential's
    /// message without its path, a gateway's after the file it names, any other error as
    /// `failed` in its own words.
    public static func reported(_ error: any ReportableError) -> ReportedError {
        switch error {
        case let error as CredentialError:
            ReportedError(code: error.code.name, message: error.message, hint: error.hint)
        case let error as GatewayError: error.reported
        case let error as PreflightFailure: ReportedError(code: error.code.name, message: error.message)
        default: ReportedError(code: ErrorCode.failed.rawValue, message: UserFacing.describe(error))
        }
    }

    /// Any error as a report keeps it: typed as it was thrown, or a ``PreflightFailure``.
    static func typed(_ error: any Error) -> any ReportableError {
        (error as? any ReportableError) ?? PreflightFailure(message: UserFacing.describe(error))
    }

    /// Loads the credential `name` and checks it; a credential that cannot be loaded is not ready.
    public func check(_ name: String, loader: CredentialLoader) async -> PreflightReport {
        do {
            return await check(try await loader.load(name), reportedAs: name)
        } catch {
            var report = PreflightReport(credential: name)
            report.error = Self.typed(error)
            return report
        }
    }

    /// Checks a loaded credential.
    public func check(_ credential: LoadedCredential, reportedAs name: String? = nil) async -> PreflightReport {
        var report = PreflightReport(credential: name ?? credential.name)
        report.isStored = credential.isStored
        let topic = self.topic ?? credential.defaultTopic
        report.topic = topic
        report.findings = credential.preflightFindings(
            environment: environment,
            topic: topic,
            warnDays: warnDays,
            at: date
        )
        let plan: ConnectionSettings.Plan
        do {
            plan = try settings.configuration(for: credential, environment: environment)
        } catch {
            report.error = Self.typed(error)
            return report
        }
        let (outcome, fallback) = await probe(credential, configuration: plan.configuration, topic: topic)
        report.portFallback = fallback
        report.handshake = outcome.handshake
        report.authCheck = outcome.authCheck
        if let error = outcome.error {
            report.connectionError = error
            report.error = error
        }
        report.ready = outcome.verdict == .accepted && !report.findings.contains(where: Self.isBlocking)
        return report
    }
}

/// One credential's preflight verdict.
public struct PreflightReport: Encodable, Sendable {
    public var credential: String
    /// True only when the credential would work for this deploy.
    public var ready: Bool
    public var topic: String?
    public var findings: [Finding]
    public var handshake: HandshakeReport?
    public var authCheck: AuthCheck?
    /// Why it could not be checked (the credential could not be loaded, or the gateway not
    /// reached), typed, with its subject: what a program decides on, by its code. The JSON
    /// report gives it as ``PreflightCheck/reported(_:)`` words it.
    public var error: (any ReportableError)?
    /// When the gateway could not be reached: the error (``error`` is its message and hint).
    public var connectionError: GatewayError?
    /// True when the credential came from the store (``credential`` is then its alias).
    public var isStored = false
    /// Port 443 could not be reached and 2197 was tried.
    public var portFallback: PortFallback?

    public init(credential: String, ready: Bool = false, topic: String? = nil, findings: [Finding] = []) {
        self.credential = credential
        self.ready = ready
        self.topic = topic
        self.findings = findings
    }

    /// The first finding that blocks the deploy.
    public var blockingFinding: Finding? { findings.first(where: PreflightCheck.isBlocking) }

    enum CodingKeys: String, CodingKey {
        case credential, ready, topic, findings, handshake, authCheck, error, portFallback
    }

    /// The report's JSON; ``error`` becomes its ``ReportedError`` shape here.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(credential, forKey: .credential)
        try container.encode(ready, forKey: .ready)
        try container.encodeIfPresent(topic, forKey: .topic)
        try container.encode(findings, forKey: .findings)
        try container.encodeIfPresent(handshake, forKey: .handshake)
        try container.encodeIfPresent(authCheck, forKey: .authCheck)
        try container.encodeIfPresent(error.map(PreflightCheck.reported), forKey: .error)
        try container.encodeIfPresent(portFallback, forKey: .portFallback)
    }
}

/// A preflight that failed for a reason no module has a code for: ``ErrorCode/failed``, with the
/// failure in words.
public struct PreflightFailure: ReportableError {
    public var code: ErrorCode { .failed }
    public var message: String
    public var hint: String? { nil }
    public init(message: String) { self.message = message }
}
