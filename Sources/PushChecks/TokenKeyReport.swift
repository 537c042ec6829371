import CredentialFormats
import Foundation
import PushStore

/// A token key file (`AuthKey_<KEYID>.p8`) as `inspect` reports it. The file holds only the key;
/// the team and the restrictions Apple may put on a key (one environment, certain topics) are
/// what the person said about it.
public struct TokenKeyReport: Encodable, Sendable {
    public var keyID: String?
    /// Where the key ID came from: "file_name", "option", or nil when unknown.
    public var keyIDSource: String?
    public var teamID: String?
    public var algorithm: String
    public var curve: String
    public var publicKeySha256: String
    /// The topics the key is restricted to; empty for a key of the whole team.
    public var topics: [String]
    /// The environments the key serves.
    public var environments: [PushEnvironment]

    public init(
        _ file: TokenKeyFile,
        keyIDGiven: Bool,
        teamID: String?,
        topics: [String],
        environments: [PushEnvironment]
    ) {
        keyID = file.keyID
        keyIDSource = file.keyID == nil ? nil : keyIDGiven ? "option" : "file_name"
        self.teamID = teamID
        algorithm = "ES256"
        curve = file.curve
        publicKeySha256 = file.publicKeyFingerprint
        self.topics = topics
        self.environments = environments
    }

    enum CodingKeys: String, CodingKey {
        // Acronym raw values spelled as ReportSchema requires (`key_id`, `key_id_source`, `team_id`).
        case keyID = "keyId"
        case keyIDSource = "keyIdSource"
        case teamID = "teamId"
        case algorithm, curve, publicKeySha256, topics, environments
    }

    /// Topics as objects with their kinds, as in every report.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(keyID, forKey: .keyID)
        try container.encodeIfPresent(keyIDSource, forKey: .keyIDSource)
        try container.encodeIfPresent(teamID, forKey: .teamID)
        try container.encode(algorithm, forKey: .algorithm)
        try container.encode(curve, forKey: .curve)
        try container.encode(publicKeySha256, forKey: .publicKeySha256)
        try container.encode(PushTopic.described(topics), forKey: .topics)
        try container.encode(environments, forKey: .environments)
    }
}

extension FileReport {
    /// A token key file's report, with the findings `check` would make without expectations.
    public init(tokenKey report: TokenKeyReport, path: String) {
        self.init(path: path, error: CredentialError(.corrupt, path: path, ""))
        error = nil
        tokenKey = report
        findings =
            CredentialCheck.tokenKey(
                TokenKeyFacts(
                    name: path,
                    origin: "file",
                    keyID: report.keyID,
                    teamID: report.teamID,
                    topics: report.topics,
                    environments: report.environments,
                    publicKeyFingerprint: report.publicKeySha256
                ),
                keyPresent: nil,
                expectations: CheckExpectations()
            ).findings
    }
}
