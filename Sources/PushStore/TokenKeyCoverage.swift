import CredentialFormats
import PushCore

/// What a token key is recorded to serve: the apps (bundle IDs) it pushes to, the environments,
/// and the team whose apps those are. A rotation compares the new key's with the replaced
/// credential's so that a `--replace` never quietly serves less.
struct TokenKeyCoverage {
    var topics: [String]
    var environments: [PushEnvironment]
    var teamID: String

    /// The bundle IDs a replaced credential served: a token key's topics as recorded; a
    /// certificate's apps without Apple's derived topics (`.voip`, `.complication`…), which a
    /// token key covers through its bundle ID.
    static func apps(of replaced: StoredCredential) -> [String] {
        replaced.kind == .tokenKey ? replaced.topics : StoredCredential.apps(in: [replaced])
    }

    /// Refuses a replacement that would stop serving an app, an environment or a team the
    /// replaced credential serves, as a narrower certificate rotation is refused.
    func refuseNarrower(replacing old: StoredCredential, path: String?) throws {
        var lost: [String] = []
        let lostApps = Self.apps(of: old).filter { !TopicScope.tokenKey(topics, covers: $0) }
        if !lostApps.isEmpty {
            lost.append("it is not recorded for \(lostApps.joined(separator: ", ")), which \(old.alias) serves")
        }
        let lostEnvironments = old.environments.filter { !environments.contains($0) }
        if !lostEnvironments.isEmpty {
            let serves =
                environments.isEmpty
                ? "no environment" : environments.map(\.rawValue).joined(separator: " and ")
            lost.append(
                "it is for \(serves) only, and \(old.alias) also serves \(lostEnvironments.map(\.rawValue).joined(separator: " and "))"
            )
        }
        if let oldTeam = old.teamID, oldTeam != teamID {
            lost.append("it belongs to team \(teamID), and \(old.alias) pushes for team \(oldTeam)'s apps")
        }
        guard !lost.isEmpty else { return }
        throw CredentialError(
            .narrowerCoverage,
            path: path,
            "This token key would replace \(old.alias), but \(lost.joined(separator: "; and ")); nothing changed.",
            hint:
                "Give the replaced credential's topics and environments, or leave them out to keep them; to replace it all the same, say so explicitly.",
            alias: old.alias
        )
    }
}
