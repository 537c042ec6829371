import Foundation
import PushStore

/// One version of the member list, as a commit holds it: `team.json` and its signature.
public struct SignedMemberList: Sendable, Equatable {
    public var bytes: [UInt8]
    public var signature: String?
    /// The commit that brought this version (nil for one not committed yet).
    public var commit: String?

    public init(bytes: [UInt8], signature: String?, commit: String?) {
        self.bytes = bytes
        self.signature = signature
        self.commit = commit
    }

    public var team: TeamFile? { try? TeamFile.decode(bytes) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes && lhs.signature == rhs.signature }
}

/// How one member list differs from another, by member name.
public struct MemberDifference: Sendable, Equatable {
    public var added: [TeamFile.Member] = []
    public var removed: [TeamFile.Member] = []
    /// Members kept by name whose recipient or signing key changed (shown as they are now).
    public var replaced: [TeamFile.Member] = []

    public init(from old: TeamFile?, to new: TeamFile?) {
        let before = old?.members ?? []
        let after = new?.members ?? []
        for member in after {
            guard let previous = before.first(where: { $0.name == member.name }) else {
                added.append(member)
                continue
            }
            if previous.recipient != member.recipient || previous.signingKey != member.signingKey {
                replaced.append(member)
            }
        }
        removed = before.filter { member in !after.contains { $0.name == member.name } }
    }

    public var isEmpty: Bool { added.isEmpty && removed.isEmpty && replaced.isEmpty }
}

/// A change of the member list that was taken as trusted: signed by a member of the list before it.
public struct AcceptedMembershipChange: Sendable {
    public var commit: String?
    public var signer: TeamFile.Member
    public var difference: MemberDifference
    public var members: [TeamFile.Member]
}

/// A member list in the repository that is not trusted: why, and what it would change.
public struct UntrustedMembership: Sendable {
    public var commit: String?
    /// Who committed it, as git records it ("name <email>").
    public var author: String?
    public var reason: String
    /// What it would change against the trusted list.
    public var difference: MemberDifference
    /// Whether it is refused only for being no newer than the trusted list (an older signed list).
    public var isStale = false
    /// Set when the history holds two lists that each follow the same trusted one on different
    /// lines: neither is taken, and `--restore-members` is refused (see ``MembershipFork``).
    public var fork: MembershipFork?
}

/// The rule by which a member list becomes trusted (docs/team.md, "Signed membership"): a new
/// version is taken only when it is signed by a member of the list trusted before it, counts
/// higher than that list, follows it in the history (its commit descends from that list's), and
/// is a usable list (members, no name twice, recipients age takes).
///
/// Two lists that each follow the same trusted list on different lines of the history are a
/// fork: neither is taken, and only a later list that descends from both and is signed by a
/// member of both settles it (see ``MembershipFork``).
///
/// The first list of a repository is trusted when it is signed by one of its own members (the
/// founder); a member who joins sees every member's name and key fingerprints at that moment.
/// Lists written before member lists were signed (no version, no signature) are trusted as they
/// stand until the first signed one, which must be signed by a member of that unsigned list.
public enum MembershipChain {
    public struct Evaluation: Sendable {
        /// The last trusted list (nil when not even the first could be trusted).
        public var trusted: SignedMemberList?
        /// The changes taken, oldest first.
        public var accepted: [AcceptedMembershipChange] = []
        /// The newest list, when it is not the trusted one; or the fork that stops the walk.
        public var pending: UntrustedMembership?
    }

    /// Walks `candidates` (oldest first, in the history's topological order) from `anchor`,
    /// taking each version the rule allows. Versions that do not pass are passed over: a later
    /// one signed by a trusted member still counts, but the newest decides `pending`. A fork
    /// stops the walk at the list both sides follow (or at `anchor`) until a list settles it.
    public static func evaluate(
        anchor: SignedMemberList?,
        candidates: [SignedMemberList],
        history: MembershipHistory = .linear
    ) -> Evaluation {
        var walk = Walk(anchor: anchor, history: history)
        for candidate in candidates { walk.take(candidate) }
        return walk.finish(newest: candidates.last)
    }

    struct Refusal: Error {
        var reason: String
        var isStale = false
    }

    static func refusalOf(from trusted: SignedMemberList?, to candidate: SignedMemberList) -> Refusal {
        if case .failure(let refusal) = verdict(from: trusted, to: candidate) { return refusal }
        return Refusal(reason: "it is not the trusted list")
    }

    /// Whether `candidate` may follow `trusted`, and who signed it.
    static func verdict(
        from trusted: SignedMemberList?,
        to candidate: SignedMemberList
    ) -> Result<TeamFile.Member, Refusal> {
        guard let team = candidate.team else {
            return .failure(Refusal(reason: "it cannot be read as a member list"))
        }
        let previous = trusted?.team
        let problems = team.problems(carriedFrom: previous)
        if !problems.isEmpty { return .failure(Refusal(reason: problems.joined(separator: "; "))) }
        if let previous, previous.teamID != team.teamID {
            return .failure(Refusal(reason: "it names another team (\(team.teamID))"))
        }
        // Unsigned lists of a store made before signing: trusted as they stand until the first signed one.
        if team.version == nil, candidate.signature == nil, previous == nil || previous?.version == nil {
            return .success(team.members[0])
        }
        guard let armored = candidate.signature else { return .failure(Refusal(reason: "it is not signed")) }
        guard let signature = SSHSignature(armored: armored) else {
            return .failure(Refusal(reason: "its signature file is not an SSH signature apnsctl can check"))
        }
        let key = signature.publicKey
        guard key.verifies(armored, of: candidate.bytes, namespace: TeamFile.signatureNamespace) else {
            return .failure(Refusal(reason: "its signature by \(key.fingerprint) does not match the list"))
        }
        guard let version = team.version else { return .failure(Refusal(reason: "it has no version number")) }
        guard let previous else {
            // The first list: signed by one of its own members.
            guard let founder = team.member(signingWith: key) else {
                return .failure(Refusal(reason: "it is signed by \(key.fingerprint), the key of none of its members"))
            }
            return .success(founder)
        }
        if let previousVersion = previous.version, version <= previousVersion {
            return .failure(
                Refusal(
                    reason: "its version \(version) does not follow the trusted version \(previousVersion)",
                    isStale: true
                )
            )
        }
        if let signer = previous.member(signingWith: key) { return .success(signer) }
        if previous.version == nil, let own = team.member(signingWith: key),
            previous.members.contains(where: { $0.name == own.name && $0.recipient == own.recipient })
        {
            // The first signed list of an unsigned store: signed by a member of it, adding their key.
            return .success(own)
        }
        if let former = team.member(signingWith: key) {
            return .failure(
                Refusal(reason: "it is signed by \(former.name) (\(key.fingerprint)), who is not a trusted member")
            )
        }
        return .failure(Refusal(reason: "it is signed by \(key.fingerprint), the key of no trusted member"))
    }
}
