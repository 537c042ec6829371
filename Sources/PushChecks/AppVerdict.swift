import Foundation
import PushStore

/// The stored credentials that could serve one app in one environment, and the others with why
/// they were left out.
///
/// The rule, once for `check`, `preflight`, `list` and the metrics: a credential is a candidate
/// for an app when its topics are the app's bundle ID or a topic derived from it (`APP.voip`…),
/// or when it is a token key that records no topics (it may serve every app of its team); and,
/// when an environment is asked about, when it serves that environment (or records none). Of
/// candidates, a certificate is superseded when another certificate of the same app covers every
/// topic and environment it covers and expires later: the rotation's successor is what counts.
/// Other apps' credentials, other environments' and superseded ones are skipped: never judged,
/// never probed, never failures.
public struct AppSelection: Sendable {
    /// A credential left out, with why.
    public struct Skipped: Encodable, Sendable, Equatable {
        public enum Reason: String, Codable, Sendable {
            case otherApp = "other_app"
            case otherEnvironment = "other_environment"
            case superseded
        }

        public var credential: String
        public var reason: Reason
        /// Said for people: "for com.b, not for com.a".
        public var message: String
        /// For a superseded credential: its successor's alias.
        public var supersededBy: String?

        public init(credential: String, reason: Reason, message: String, supersededBy: String? = nil) {
            self.credential = credential
            self.reason = reason
            self.message = message
            self.supersededBy = supersededBy
        }
    }

    /// The topic asked about (a bundle ID, or a derived topic such as `APP.voip`).
    public var topic: String
    /// The bundle ID the topic belongs to.
    public var app: String { TopicScope.app(of: topic) }
    public var environment: PushEnvironment?
    /// True when the app was named (`--topic`), false when it was found in the store.
    public var named: Bool
    /// The credentials to judge, in store order.
    public var candidates: [StoredCredential]
    public var skipped: [Skipped]
    /// Every stored credential of the app is for the sandbox only (a development app).
    public var sandboxOnly: Bool

    public init(topic: String, environment: PushEnvironment?, named: Bool = true, stored: [StoredCredential]) {
        self.topic = topic
        self.environment = environment
        self.named = named
        let own = stored.filter { TopicScope.relates($0.topics, to: topic) }
        sandboxOnly = !own.isEmpty && own.allSatisfy { $0.environments == [.sandbox] }
        var candidates: [StoredCredential] = []
        var skipped: [Skipped] = []
        for credential in stored {
            let related =
                TopicScope.relates(credential.topics, to: topic)
                || (credential.kind == .tokenKey && credential.topics.isEmpty)
            if !related {
                let topics = credential.topics.isEmpty ? "no topic" : credential.topics.joined(separator: ", ")
                skipped.append(
                    Skipped(credential: credential.alias, reason: .otherApp, message: "for \(topics), not for \(topic)")
                )
            } else if let environment, !credential.environments.isEmpty,
                !credential.environments.contains(environment)
            {
                let only = credential.environments.map(\.rawValue).joined(separator: " and ")
                skipped.append(
                    Skipped(
                        credential: credential.alias,
                        reason: .otherEnvironment,
                        message: "for \(only) only, not for \(environment)"
                    )
                )
            } else {
                candidates.append(credential)
            }
        }
        var kept: [StoredCredential] = []
        for credential in candidates {
            if let successor = Self.successor(of: credential, among: candidates) {
                skipped.append(
                    Skipped(
                        credential: credential.alias,
                        reason: .superseded,
                        message: "superseded by \(successor.alias), which expires later",
                        supersededBy: successor.alias
                    )
                )
            } else {
                kept.append(credential)
            }
        }
        self.candidates = kept
        self.skipped = skipped
    }

    /// The selections for the topics asked about, or, when none is, one per app found in the store.
    public static func select(
        topics: [String],
        environment: PushEnvironment?,
        stored: [StoredCredential]
    ) -> [AppSelection] {
        if topics.isEmpty {
            return apps(in: stored).map {
                AppSelection(topic: $0, environment: environment, named: false, stored: stored)
            }
        }
        var seen = Set<String>()
        return topics.filter { seen.insert($0).inserted }.map {
            AppSelection(topic: $0, environment: environment, named: true, stored: stored)
        }
    }

    /// The bundle IDs the store's credentials are for, in the order first met.
    public static func apps(in stored: [StoredCredential]) -> [String] { StoredCredential.apps(in: stored) }

    /// The credential that supersedes this one: a later-expiring certificate of the same app that
    /// covers every topic and environment this one covers. The latest such one is named.
    public static func successor(
        of credential: StoredCredential,
        among stored: [StoredCredential]
    )
        -> StoredCredential?
    {
        guard credential.kind == .certificate, let ends = credential.notAfter, !credential.topics.isEmpty else {
            return nil
        }
        return stored.filter { other in
            guard other.alias != credential.alias, other.kind == .certificate, let otherEnds = other.notAfter else {
                return false
            }
            return otherEnds > ends && Set(credential.topics).isSubset(of: other.topics)
                && Set(credential.environments).isSubset(of: other.environments)
        }.max { ($0.notAfter ?? .distantPast) < ($1.notAfter ?? .distantPast) }
    }

    /// Every superseded credential of a store, by alias, with its successor's alias: what `list` shows.
    public static func superseded(in stored: [StoredCredential]) -> [String: String] {
        var result: [String: String] = [:]
        for credential in stored {
            if let successor = successor(of: credential, among: stored) { result[credential.alias] = successor.alias }
        }
        return result
    }
}

/// How one candidate came out of a check or a preflight.
public enum CredentialFitness: String, Codable, Sendable {
    /// Nothing found that would stop it working (warnings allowed).
    case fit
    /// Checked, and something would stop it working.
    case unfit
    /// Could not be judged: network, DNS, TLS or proxy failure, Secret Service out of reach.
    case couldNotCheck = "could_not_check"
}

/// The verdict for one app in one environment: ready when at least one selected credential is fit.
public struct AppVerdict: Encodable, Sendable {
    public enum State: String, Codable, Sendable {
        /// At least one selected credential is fit.
        case ready
        /// No selected credential is fit, and every one could be judged (or none was selected).
        case notReady = "not_ready"
        /// A development app, found in the store (not named), asked about for production: reported, not a failure.
        case sandboxOnly = "sandbox_only"
        /// None is fit and at least one could not be judged.
        case couldNotCheck = "could_not_check"
    }

    public var topic: String
    public var app: String
    public var environment: PushEnvironment?
    public var state: State
    public var named: Bool
    public var fit: [String]
    public var unfit: [String]
    public var couldNotCheck: [String]
    public var skipped: [AppSelection.Skipped]

    public var ready: Bool { state == .ready }
    /// Whether this verdict stops a deploy: not ready, or not known.
    public var fails: Bool { state == .notReady || state == .couldNotCheck }

    /// Judges a selection from how each candidate (by alias) came out; a candidate missing from
    /// `judged` counts as not checked.
    public init(_ selection: AppSelection, judged: [String: CredentialFitness]) {
        topic = selection.topic
        app = selection.app
        environment = selection.environment
        named = selection.named
        skipped = selection.skipped
        let aliases = selection.candidates.map(\.alias)
        fit = aliases.filter { judged[$0] == .fit }
        unfit = aliases.filter { judged[$0] == .unfit }
        couldNotCheck = aliases.filter { judged[$0] == nil || judged[$0] == .couldNotCheck }
        if !fit.isEmpty {
            state = .ready
        } else if selection.sandboxOnly, selection.environment == .production, !selection.named {
            state = .sandboxOnly
        } else if !couldNotCheck.isEmpty {
            state = .couldNotCheck
        } else {
            state = .notReady
        }
    }

    enum CodingKeys: String, CodingKey {
        case topic, app, environment, state, ready, named, fit, unfit, couldNotCheck, skipped
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(topic, forKey: .topic)
        try container.encode(app, forKey: .app)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encode(state, forKey: .state)
        try container.encode(ready, forKey: .ready)
        try container.encode(named, forKey: .named)
        try container.encode(fit, forKey: .fit)
        try container.encode(unfit, forKey: .unfit)
        try container.encode(couldNotCheck, forKey: .couldNotCheck)
        try container.encode(skipped, forKey: .skipped)
    }

    /// The outcome of a set of verdicts: a problem when any app is not ready, else could not
    /// check when any could not be judged, else all well. Sandbox-only apps do not fail.
    public static func outcome(_ verdicts: [AppVerdict]) -> CheckOutcome {
        if verdicts.contains(where: { $0.state == .notReady }) { return .problemFound }
        if verdicts.contains(where: { $0.state == .couldNotCheck }) { return .couldNotCheck }
        return .allWell
    }
}

extension CheckResult {
    /// How `check` counts this result in an app's verdict: a key the Secret Service could not be
    /// asked for, or a credential that could not be read, is not known to be fit.
    public var fitness: CredentialFitness {
        if error != nil { return .couldNotCheck }
        if !fit { return .unfit }
        return findings.contains { $0.code == .secretUnverified } ? .couldNotCheck : .fit
    }
}

extension AppVerdict {
    /// The verdict from `check` results of the selection's candidates.
    public init(_ selection: AppSelection, results: [CheckResult]) {
        var judged: [String: CredentialFitness] = [:]
        for result in results { judged[result.name] = result.fitness }
        self.init(selection, judged: judged)
    }
}
