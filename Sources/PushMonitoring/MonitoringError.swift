import PushChecks
import PushCore

/// The codes of the monitoring module, each declared once with the string JSON reports give.
extension ErrorCode {
    /// A `/probe` request with an unknown parameter, a missing or unknown credential or
    /// environment, or a topic that is not the credential's.
    public static let invalidProbeRequest = ErrorCode("invalid_probe_request", failure: .invalidRequest)
    /// A probe could not be set up for a reason no module has a code for (its message says which).
    public static let setupFailed = ErrorCode("setup_failed")
    /// A web configuration file (TLS, basic authentication) that cannot be used.
    public static let invalidWebConfig = ErrorCode("invalid_web_config")
    /// A probe of an environment the credential does not serve (a production certificate probed
    /// against sandbox): APNs would refuse it. The string is the check's finding code for it.
    public static let environmentMismatch = ErrorCode("environment_mismatch", failure: .problem)
}

/// The one error of the monitoring module: a probe request the exporter refuses (400), a probe
/// that could not be set up for a reason no module has a code for, or a web configuration file
/// that cannot be used (the file, the field and what is wrong). Made where it happens by the
/// initializer with the code, `MonitoringError(.invalidProbeRequest, message)`; a web
/// configuration's by its factory below.
public struct MonitoringError: ReportableError {
    /// A module's codes are ``ErrorCode``s: one string each, the one JSON gives.
    public typealias Code = ErrorCode

    public let code: Code
    public let message: String
    public var hint: String? { nil }
    /// For a web configuration: the file, and the field that is wrong when one is.
    public let path: String?
    public let field: String?

    /// An error of the code, in the words of the call site.
    package init(_ code: Code, _ message: String, path: String? = nil, field: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.field = field
    }

    /// ``ErrorCode/environmentMismatch``: `target`'s credential does not serve its environment,
    /// as the check's `finding` says, with its fix.
    static func environmentNotServed(_ target: ProbeTarget, _ finding: Finding) -> MonitoringError {
        let fix = finding.hint.map { " \($0)" } ?? ""
        return Self(
            .environmentMismatch,
            "\(Untrusted.display(target.credential)) cannot be probed against \(target.environment): \(finding.message)\(fix) Or probe environment=\(target.environment == .production ? "sandbox" : "production")."
        )
    }

    /// ``ErrorCode/invalidWebConfig``: the file at `path`, its `field` when one is wrong, and
    /// what is wrong (`problem`, without a full stop).
    static func invalidWebConfig(_ path: String, _ field: String?, _ problem: String) -> MonitoringError {
        Self(
            .invalidWebConfig,
            "\(path): " + (field.map { "\($0) " } ?? "") + problem + ".",
            path: path,
            field: field
        )
    }
}
