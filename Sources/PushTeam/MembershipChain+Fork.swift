import Foundation

/// What the walk along the member lists needs of the repository's history.
public struct MembershipHistory: Sendable {
    /// Whether commit `descendant` has commit `ancestor` in its history (true for the same commit).
    public var descends: @Sendable (_ descendant: String, _ ancestor: String) -> Bool
    /// The member list `commit`'s first parent holds: what a list that left the trusted line
    /// before this clone's anchor was written over.
    public var listBefore: @Sendable (_ commit: String) -> SignedMemberList?

    public init(
        descends: @escaping @Sendable (_ descendant: String, _ ancestor: String) -> Bool,
        listBefore: @escaping @Sendable (_ commit: String) -> SignedMemberList?
    ) {
        self.descends = descends
        self.listBefore = listBefore
    }

    /// Lists that form one line, each following the one before (no history to ask).
    public static let linear = MembershipHistory(descends: { _, _ in true }, listBefore: { _ in nil })
}

/// Two member lists that each follow the same trusted list on different lines of the history
/// (two branches, merged or not, or a remote reset to before a change and written again). Neither
/// is taken: the clone keeps the list both follow (or the one it already trusted), and only a
/// later list that descends from both and is signed by a member of both settles it.
public struct MembershipFork: Sendable {
    public struct Side: Sendable {
        public var commit: String?
        public var version: Int?
        /// Who signed it: the member's name, or "no member", and the key's fingerprint.
        public var signer: String
        public var fingerprint: String?
        /// What it changes against the list both sides follow.
        public var difference: MemberDifference
        public var members: [TeamFile.Member]
        /// Set when this side can never be taken: it is signed by a member the other side removed.
        public var refusal: String?
    }

    /// The version of the list both sides follow.
    public var baseVersion: Int?
    /// The side this clone's trusted line took (or its anchor) first, then the other.
    public var sides: [Side]
    /// Members of both sides with a signing key: those who may settle the fork.
    public var settlers: [String]
    /// When neither side can be taken (each is signed by a member the other removed) and this
    /// clone keeps the first side: its commit. A member of that list settles the fork here by
    /// signing it again as a new version (`team sync --resolve-fork` with this commit).
    public var resignable: String?
}

extension MembershipChain {
    /// One walk along the candidates: the line of lists taken, and a fork found on the way.
    struct Walk {
        struct Step {
            var list: SignedMemberList
            var change: AcceptedMembershipChange?
        }

        struct Fork {
            var base: SignedMemberList
            var ours: SignedMemberList
            var theirs: SignedMemberList
        }

        var history: MembershipHistory
        /// The lists trusted in this walk, oldest first (the anchor first): the last is trusted.
        var line: [Step]
        var fork: Fork?
        var lastRefusal: Refusal?

        init(anchor: SignedMemberList?, history: MembershipHistory) {
            self.history = history
            line = anchor.map { [Step(list: $0, change: nil)] } ?? []
        }

        var trusted: SignedMemberList? { line.last?.list }

        func descends(_ list: SignedMemberList, from ancestor: SignedMemberList) -> Bool {
            guard let commit = list.commit, let other = ancestor.commit else { return true }
            return history.descends(commit, other)
        }

        mutating func take(_ candidate: SignedMemberList) {
            if let trusted, trusted.bytes == candidate.bytes { return }
            if let fork {
                // A merge that carries one side's list on is that side, not a new list.
                if candidate.bytes == fork.ours.bytes || candidate.bytes == fork.theirs.bytes { return }
                if let signer = settles(fork, candidate) {
                    accept(candidate, signer: signer)
                    self.fork = nil
                    lastRefusal = nil
                } else {
                    lastRefusal = Refusal(
                        reason: "the member list is forked, and this list is not one signed by a member of both sides "
                            + "that descends from both"
                    )
                }
                return
            }
            guard let trusted, !descends(candidate, from: trusted) else {
                switch MembershipChain.verdict(from: trusted, to: candidate) {
                case .success(let signer):
                    accept(candidate, signer: signer)
                    lastRefusal = nil
                case .failure(let refusal):
                    lastRefusal = refusal
                }
                return
            }
            // Off the trusted line: a fork when it is a valid change of a list of that line (or,
            // left before this walk's anchor, of the list its commit was written over).
            let point = line.lastIndex { descends(candidate, from: $0.list) }
            let base = point.map { line[$0].list } ?? candidate.commit.flatMap(history.listBefore)
            guard let base, case .success = MembershipChain.verdict(from: base, to: candidate),
                point != nil || (candidate.team?.version ?? 0) >= (line[0].list.team?.version ?? 0)
            else {
                lastRefusal = MembershipChain.refusalOf(from: trusted, to: candidate)
                return
            }
            let ours: SignedMemberList
            if let point {
                ours = line[point + 1].list
                line.removeSubrange((point + 1)...)
            } else {
                ours = line[0].list
                line.removeSubrange(1...)
                // An anchor signed by a member the other side removed is not kept either, unless
                // that side cannot be taken itself (it is signed by a member the anchor removed):
                // then the anchor stays, never a list older than it.
                if Self.removedSigner(of: ours, base: base, other: candidate) != nil,
                    Self.removedSigner(of: candidate, base: base, other: ours) == nil,
                    let baseCommit = base.commit, let anchorCommit = ours.commit,
                    history.descends(anchorCommit, baseCommit)
                {
                    line = [Step(list: base, change: nil)]
                }
            }
            fork = Fork(base: base, ours: ours, theirs: candidate)
            lastRefusal = nil
        }

        /// Who signed `candidate`, when it settles `fork`: it descends from both sides and each
        /// side's list takes it as a change (so it is signed by a member of both, numbered above both).
        func settles(_ fork: Fork, _ candidate: SignedMemberList) -> TeamFile.Member? {
            guard descends(candidate, from: fork.ours), descends(candidate, from: fork.theirs),
                case .success(let signer) = MembershipChain.verdict(from: fork.ours, to: candidate),
                case .success = MembershipChain.verdict(from: fork.theirs, to: candidate)
            else { return nil }
            return signer
        }

        mutating func accept(_ candidate: SignedMemberList, signer: TeamFile.Member) {
            let change = AcceptedMembershipChange(
                commit: candidate.commit,
                signer: signer,
                difference: MemberDifference(from: trusted?.team, to: candidate.team),
                members: candidate.team?.members ?? []
            )
            line.append(Step(list: candidate, change: change))
        }

        func finish(newest: SignedMemberList?) -> Evaluation {
            var evaluation = Evaluation(trusted: trusted)
            evaluation.accepted = line.compactMap(\.change)
            if let fork {
                let described = Self.describe(fork, trusted: trusted)
                let other = described.sides[0]
                evaluation.pending = UntrustedMembership(
                    commit: fork.theirs.commit,
                    author: nil,
                    reason: "it and the list of commit \(other.commit.map { String($0.prefix(12)) } ?? "?") "
                        + "(signed by \(other.signer)) each follow version \(described.baseVersion.map { String($0) } ?? "?") "
                        + "on a different line of the history: the member list is forked",
                    difference: MemberDifference(from: trusted?.team, to: fork.theirs.team),
                    fork: described
                )
            } else if let newest, newest.bytes != trusted?.bytes {
                let refusal = lastRefusal ?? MembershipChain.refusalOf(from: trusted, to: newest)
                evaluation.pending = UntrustedMembership(
                    commit: newest.commit,
                    author: nil,
                    reason: refusal.reason,
                    difference: MemberDifference(from: trusted?.team, to: newest.team),
                    isStale: refusal.isStale
                )
            }
            return evaluation
        }

        /// The member of `base` who signed `side`, when `other` no longer has their signing key:
        /// a change signed by someone the other side removed (or whose key it replaced) is never
        /// taken.
        static func removedSigner(
            of side: SignedMemberList,
            base: SignedMemberList,
            other: SignedMemberList
        ) -> TeamFile.Member? {
            guard let key = side.signature.flatMap(SSHSignature.init(armored:))?.publicKey,
                let signer = base.team?.member(signingWith: key), let others = other.team,
                others.member(signingWith: key) == nil
            else { return nil }
            return signer
        }

        /// `trusted` is the list this clone keeps while forked.
        static func describe(_ fork: Fork, trusted: SignedMemberList?) -> MembershipFork {
            func side(_ list: SignedMemberList, other: SignedMemberList) -> MembershipFork.Side {
                let key = list.signature.flatMap(SSHSignature.init(armored:))?.publicKey
                let signer = key.flatMap {
                    fork.base.team?.member(signingWith: $0) ?? list.team?.member(signingWith: $0)
                }
                let removed = removedSigner(of: list, base: fork.base, other: other)
                return MembershipFork.Side(
                    commit: list.commit,
                    version: list.team?.version,
                    signer: signer?.name ?? "no member",
                    fingerprint: key?.fingerprint,
                    difference: MemberDifference(from: fork.base.team, to: list.team),
                    members: list.team?.members ?? [],
                    refusal: removed.map {
                        other.team?.member(named: $0.name) == nil
                            ? "it is signed by \($0.name), whom the other side removed"
                            : "it is signed with \($0.name)'s signing key, which the other side replaced"
                    }
                )
            }
            let ours = fork.ours.team?.members ?? []
            let theirs = fork.theirs.team?.members ?? []
            let settlers = ours.filter { member in
                member.signingKey != nil
                    && theirs.contains { $0.name == member.name && $0.signingKey == member.signingKey }
            }
            let sides = [side(fork.ours, other: fork.theirs), side(fork.theirs, other: fork.ours)]
            return MembershipFork(
                baseVersion: fork.base.team?.version,
                sides: sides,
                settlers: settlers.map(\.name),
                resignable: sides.allSatisfy { $0.refusal != nil } && trusted?.bytes == fork.ours.bytes
                    ? fork.ours.commit : nil
            )
        }
    }
}
