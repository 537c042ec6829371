import Foundation
import PushCore

/// The tokens a run's results say to act on (`apnsctl results tokens`), and the warning that
/// keeps BadDeviceToken answers from one environment from being taken for dead devices.
extension RunSummary {
    /// The BadDeviceToken answers that make the environment warning: at least this many...
    public static let otherEnvironmentMinimum = 20
    /// ...and more than this share of all rejections. A few BadDeviceToken answers among many
    /// Unregistered ones are tokens that are damaged; most rejections being BadDeviceToken, in
    /// numbers, is the mark of a list sent to the wrong environment (a development build's
    /// tokens to production, or the reverse), since a token is valid in one environment only.
    public static let otherEnvironmentShare = 0.5

    /// Which tokens to list.
    public enum TokenKind: Sendable {
        /// 410 Unregistered, with APNs' timestamp: the app was removed or the token retired.
        case unregistered
        /// 400 BadDeviceToken: not a token of this environment and topic.
        case badDeviceToken
        /// Lines with no final answer (failed, `outcome_unknown`): to send again in a new run.
        case unanswered
    }

    /// One token to act on.
    public struct ListedToken: Sendable, Encodable, Equatable {
        public var token: String
        /// APNs' reason (`Unregistered`, `BadDeviceToken`), or nil for a line with no answer.
        public var reason: String?
        /// For Unregistered: when APNs says the token stopped being valid (RFC 3339, UTC).
        public var timestamp: String?
        /// For a line with no final answer: its error code.
        public var error: String?
        /// The results file, and the line of the token file.
        public var file: String
        public var line: Int
    }

    /// Lists the tokens of `kind` in the results files of one run (checked as ``read(_:)``
    /// checks them), giving each to `each` as it is read, in constant memory; returns the
    /// warnings about them (the environment warning for BadDeviceToken answers).
    public static func tokens(
        _ kind: TokenKind,
        in paths: [String],
        each: (ListedToken) throws -> Void
    ) throws -> [Warning] {
        let results = try RunResults.open(paths)
        var totals = Outcomes()
        try results.forEachResult { file, result in
            totals.count(result)
            let listed: Bool
            switch kind {
            case .unregistered: listed = result.reason == APNsReason.unregistered.rawValue
            case .badDeviceToken: listed = result.reason == APNsReason.badDeviceToken.rawValue
            case .unanswered:
                listed =
                    result.status == nil && result.error != nil
                    && result.error != BulkResultCode.malformedToken.rawValue
            }
            guard listed else { return }
            try each(
                ListedToken(
                    token: result.token,
                    reason: result.reason,
                    timestamp: result.timestamp,
                    error: result.status == nil ? result.error : nil,
                    file: file.path,
                    line: result.line
                )
            )
        }
        guard kind == .badDeviceToken, let header = results.files.first?.header else { return [] }
        return environmentWarning(totals, environment: environment(of: header)).map { [$0] } ?? []
    }

    /// The environment warning, when the BadDeviceToken answers reach the threshold.
    static func environmentWarning(_ totals: Outcomes, environment: String?) -> Warning? {
        let bad = totals.rejected[APNsReason.badDeviceToken.rawValue] ?? 0
        guard bad >= otherEnvironmentMinimum, Double(bad) > otherEnvironmentShare * Double(totals.rejectedTotal)
        else { return nil }
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        let sent = "\(count(bad)) of the \(count(totals.rejectedTotal)) rejections are BadDeviceToken"
        let why: String
        switch environment.map({ $0 == "development" ? PushEnvironment.sandbox.rawValue : $0 }) {
        case PushEnvironment.production.rawValue?:
            why =
                "\(sent), sent to production: these tokens most likely belong to development builds (an app run from Xcode registers with the sandbox), not to dead devices"
        case PushEnvironment.sandbox.rawValue?:
            why =
                "\(sent), sent to the sandbox: these tokens most likely belong to production builds (TestFlight, App Store, ad hoc), not to dead devices"
        default:
            why =
                "\(sent): these tokens most likely belong to the other environment (a development build's token sent to production, or the reverse), not to dead devices"
        }
        return Warning(
            code: .tokensOfOtherEnvironment,
            message:
                "\(why). Do not delete them: send them to the other environment, and keep each token with the environment its build registered with.",
            path: nil
        )
    }
}
