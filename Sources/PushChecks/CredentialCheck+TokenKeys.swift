import CredentialFormats
import Foundation
import PushStore

/// What is known about a token key, stored or read from a file: the `.p8` itself says only
/// its key; the key ID comes from its file name, the team and the restrictions (Apple's
/// environment-restricted and topic-restricted keys) from the person or the store's index.
public struct TokenKeyFacts: Sendable {
    public var name: String
    /// "store" or "file".
    public var origin: String
    public var keyID: String?
    public var teamID: String?
    /// The apps it may push to; empty for a key of the whole team (or when nothing was recorded).
    public var topics: [String]
    /// The environments it serves; empty when nothing was recorded.
    public var environments: [PushEnvironment]
    public var publicKeyFingerprint: String?

    public init(
        name: String,
        origin: String,
        keyID: String?,
        teamID: String?,
        topics: [String] = [],
        environments: [PushEnvironment] = [],
        publicKeyFingerprint: String? = nil
    ) {
        self.name = name
        self.origin = origin
        self.keyID = keyID
        self.teamID = teamID
        self.topics = topics
        self.environments = environments
        self.publicKeyFingerprint = publicKeyFingerprint
    }

    public init(_ credential: StoredCredential) {
        self.init(
            name: credential.alias,
            origin: "store",
            keyID: credential.keyID,
            teamID: credential.teamID,
            topics: credential.topics,
            environments: credential.environments,
            publicKeyFingerprint: credential.publicKeyFingerprint
        )
    }

    public init(_ file: TokenKeyFile, teamID: String?, topics: [String] = [], environments: [PushEnvironment] = []) {
        self.init(
            name: file.path,
            origin: "file",
            keyID: file.keyID,
            teamID: teamID,
            topics: topics,
            environments: environments,
            publicKeyFingerprint: file.publicKeyFingerprint
        )
    }
}

extension CredentialCheck {
    /// Checks a stored token key. `keyPresent` is nil when the Secret Service was not asked.
    public static func tokenKey(
        _ credential: StoredCredential,
        keyPresent: Bool?,
        expectations: CheckExpectations
    ) -> CheckResult {
        tokenKey(TokenKeyFacts(credential), keyPresent: keyPresent, expectations: expectations)
    }

    /// Checks a token key. A stored key must record what it is for (topics and environments);
    /// a file says nothing of that, so a file's key is taken to serve what the deploy names
    /// unless restrictions were given.
    public static func tokenKey(
        _ key: TokenKeyFacts,
        keyPresent: Bool?,
        expectations: CheckExpectations
    ) -> CheckResult {
        var findings: [Finding] = []
        var missing: [String] = []
        if key.keyID == nil { missing.append("key ID") }
        if key.teamID == nil { missing.append("team ID") }
        if key.origin == "store" {
            if key.topics.isEmpty { missing.append("topics") }
            if key.environments.isEmpty { missing.append("environments") }
        }
        if !missing.isEmpty {
            findings.append(
                Finding(
                    code: .tokenMetadataIncomplete,
                    // A file is looked at without a team more often than it is deployed without one.
                    severity: key.origin == "store" ? .problem : .warning,
                    message:
                        "The token key's metadata lacks \(missing.joined(separator: ", ")), so it cannot be checked against a deploy.",
                    hint: key.origin == "store"
                        ? "Record the topics and environments \(key.name) is for."
                        : "Give the key ID and the team ID the key belongs to."
                )
            )
        }
        if keyPresent == false {
            findings.append(
                Finding(
                    code: .secretMissing,
                    severity: .problem,
                    message: "The private key is missing from where the store keeps it.",
                    hint: "Remove the credential and import the .p8 again."
                )
            )
        }
        findings += tokenKeyScopeFindings(
            environments: key.environments,
            topics: key.topics,
            environment: expectations.environment,
            topic: expectations.topic
        )
        return CheckResult(
            name: key.name,
            origin: key.origin,
            kind: .tokenKey,
            topics: key.topics,
            environments: key.environments,
            keyID: key.keyID,
            teamID: key.teamID,
            curve: "P-256",
            publicKeySha256: key.publicKeyFingerprint,
            findings: findings
        )
    }

    /// Whether a token key, as recorded, can serve the environment and topic asked: Apple's
    /// environment-scoped and topic-specific keys are refused outside their scope with 403
    /// BadEnvironmentKeyInToken and UnrelatedKeyIdInToken. Nothing recorded: nothing to judge.
    public static func tokenKeyScopeFindings(
        environments: [PushEnvironment],
        topics: [String],
        environment: PushEnvironment?,
        topic: String?
    ) -> [Finding] {
        var findings: [Finding] = []
        if let environment, !environments.isEmpty, !environments.contains(environment) {
            let only = environments.map(\.rawValue).joined(separator: " and ")
            findings.append(
                Finding(
                    code: .environmentMismatch,
                    severity: .problem,
                    message:
                        "The token key is recorded as restricted to \(only), so it cannot serve \(environment): APNs would answer 403 BadEnvironmentKeyInToken.",
                    hint:
                        "Use a key that serves \(environment) (a team key for both environments, or one Apple issued for \(environment)), or send to the \(only) gateway."
                )
            )
        }
        if let topic, !topics.isEmpty, !TopicScope.tokenKey(topics, covers: topic) {
            findings.append(
                Finding(
                    code: .topicNotCovered,
                    severity: .problem,
                    message:
                        "The token key is recorded as restricted to \(topics.joined(separator: ", ")), so it cannot push to \(topic): APNs would answer 403 UnrelatedKeyIdInToken.",
                    hint:
                        "A token key can push to every app of its team unless Apple restricted it to topics; if it may push to \(topic), record \(topic) among its topics."
                )
            )
        }
        return findings
    }

    /// The finding for a credential whose secret could not be read because the Secret Service
    /// is out of reach: what its stored files say was still checked.
    public static func secretUnverified(_ error: CredentialError) -> Finding {
        Finding(
            code: .secretUnverified,
            severity: .warning,
            message: "The private key was not verified: \(error.message)",
            hint: error.hint
                ?? "Check where the Secret Service is reachable, or check only what the stored files say.",
            cause: error.code
        )
    }

    /// A secret that was read but is not what the index says (a team store's age file replaced
    /// or damaged, or a link): a problem, as a missing key is.
    public static func secretTampered(_ error: CredentialError) -> Finding {
        Finding(code: .secretTampered, severity: .problem, message: error.message, hint: error.hint)
    }

    /// Whether reading a secret failed because this process cannot decrypt it (no identity, not a
    /// recipient): it could not be checked, as with a Secret Service that is down.
    public static func isUnverifiable(_ error: CredentialError) -> Bool {
        error.code == .notAMember
    }
}
