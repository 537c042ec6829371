import Foundation
import PushStore

/// Three-way merge of two clones' indexes, credential by credential: a credential changed on one
/// side only takes that side's version; the same alias changed differently on both sides is a
/// conflict that a person settles (see ``TeamStore/sync(keep:)``).
enum TeamMerge {
    struct Conflict {
        var alias: String
        var ours: StoredCredential?
        var theirs: StoredCredential?
    }

    struct Outcome {
        var index: StoreIndex
        var conflicts: [Conflict] = []
        /// The versions that lost to a `keep` choice: their files and secrets leave the store.
        var discarded: [StoredCredential] = []
    }

    static func index(
        base: StoreIndex,
        ours: StoreIndex,
        theirs: StoreIndex,
        keep: [String: TeamStore.Side]
    ) -> Outcome {
        func table(_ index: StoreIndex) -> [String: StoredCredential] {
            Dictionary(index.credentials.map { ($0.alias, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let (b, o, t) = (table(base), table(ours), table(theirs))
        var order = ours.credentials.map(\.alias)
        for alias in theirs.credentials.map(\.alias) where !order.contains(alias) { order.append(alias) }
        var outcome = Outcome(index: ours)
        outcome.index.credentials = []
        for alias in order {
            let (mine, other, original) = (o[alias], t[alias], b[alias])
            let chosen: StoredCredential?
            if mine == other || other == original {
                chosen = mine
            } else if mine == original {
                chosen = other
            } else {
                switch keep[alias] {
                case .mine?:
                    chosen = mine
                    if let other, other.sha256 != mine?.sha256 || other.keyID != mine?.keyID {
                        outcome.discarded.append(other)
                    }
                case .theirs?:
                    chosen = other
                    if let mine, mine.sha256 != other?.sha256 || mine.keyID != other?.keyID {
                        outcome.discarded.append(mine)
                    }
                case nil:
                    outcome.conflicts.append(Conflict(alias: alias, ours: mine, theirs: other))
                    chosen = mine
                }
            }
            if let chosen { outcome.index.credentials.append(chosen) }
        }
        outcome.index.requests = mergeRequests(base: base, ours: ours, theirs: theirs)
        return outcome
    }

    /// Pending requests by alias; both sides' new ones are kept, a removal on either side wins.
    static func mergeRequests(base: StoreIndex, ours: StoreIndex, theirs: StoreIndex) -> [PendingRequest]? {
        let baseAliases = Set((base.requests ?? []).map(\.alias))
        let ourAliases = Set((ours.requests ?? []).map(\.alias))
        let theirAliases = Set((theirs.requests ?? []).map(\.alias))
        var merged = (ours.requests ?? []).filter { !baseAliases.contains($0.alias) || theirAliases.contains($0.alias) }
        for request in theirs.requests ?? []
        where !ourAliases.contains(request.alias) && !baseAliases.contains(request.alias) {
            merged.append(request)
        }
        return merged.isEmpty ? nil : merged
    }

    /// Members by name, without regard to case (`Carol` is `carol`, as ``TeamFile/member(named:)``
    /// has it): each side's additions and removals are kept.
    static func members(base: TeamFile?, ours: TeamFile, theirs: TeamFile?) -> TeamFile {
        guard let theirs else { return ours }
        func names(_ team: TeamFile?) -> Set<String> { Set((team?.members ?? []).map { $0.name.lowercased() }) }
        let (baseNames, ourNames, theirNames) = (names(base), names(ours), names(theirs))
        var merged = ours
        merged.members = ours.members.filter {
            !baseNames.contains($0.name.lowercased()) || theirNames.contains($0.name.lowercased())
        }
        for member in theirs.members
        where !ourNames.contains(member.name.lowercased()) && !baseNames.contains(member.name.lowercased()) {
            merged.members.append(member)
        }
        return merged
    }
}
