import CredentialFormats
import Foundation
import PushStore

/// What this clone trusts of the team's membership, kept in the clone's own `.git` (never pushed):
/// the last trusted member list and the remote head this clone last synced with.
struct TrustState: Codable, Equatable {
    /// The trusted `team.json`, base64 of its bytes as signed.
    var members: String
    var signature: String?
    /// The commit the trusted list was found in.
    var commit: String?
    /// The remote branch's head at the last sync: a remote that no longer holds it was rewritten.
    var syncedHead: String?

    var list: SignedMemberList? {
        Data(base64Encoded: members).map { SignedMemberList(bytes: [UInt8]($0), signature: signature, commit: commit) }
    }

    init(list: SignedMemberList, syncedHead: String?) {
        members = Data(list.bytes).base64EncodedString()
        signature = list.signature
        commit = list.commit
        self.syncedHead = syncedHead
    }
}

/// Reads and moves this clone's trust in the member list along the repository's history.
struct TeamTrust {
    var root: URL
    var git: Git

    static let stateFile = ".git/apnsctl-trust.json"

    func loadState() -> TrustState? {
        guard let bytes = try? StoreFile.readIfPresent(root: root, relative: Self.stateFile, kind: .storeRecord)
        else { return nil }
        return try? JSONDecoder().decode(TrustState.self, from: Data(bytes))
    }

    func save(_ state: TrustState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try PrivateFile.write(
            [UInt8](try encoder.encode(state)),
            to: root.appendingPathComponent(Self.stateFile).path,
            overwrite: true
        )
    }

    /// Every version of the member list in `revision`'s history, oldest first (every line of
    /// it: a merge that keeps one side's list hides nothing); only those `since` does not hold
    /// when that commit is known here.
    func history(upTo revision: String, since: String? = nil) async throws -> [SignedMemberList] {
        var range = [revision]
        if let since, (try? await git.run(["cat-file", "-e", "\(since)^{commit}"]))?.succeeded == true {
            range = ["^\(since)", revision]
        }
        let commits = try await git.must(
            ["log", "--reverse", "--topo-order", "--full-history", "--format=%H"] + range
                + ["--", TeamFile.fileName, TeamFile.signatureFileName],
            what: "read the member list's history"
        )
        .split(separator: "\n").map(String.init)
        // A merge that carries one side's list on brings no new list: each list once, where it
        // first appears (versions only rise, so a list seen again is never a new change).
        var seen: Set<[UInt8]> = []
        var versions: [SignedMemberList] = []
        for commit in commits {
            guard let list = await version(at: commit) else { continue }
            if seen.insert(list.bytes + [0] + Array((list.signature ?? "").utf8)).inserted { versions.append(list) }
        }
        return versions
    }

    /// The history as the member-list walk asks it: ancestry, and the list a commit was written
    /// over. The walk decides as it asks, so it runs on ``BlockingPool`` and git runs on its thread.
    var ancestry: MembershipHistory {
        let git = self.git
        return MembershipHistory(
            descends: { descendant, ancestor in
                (try? git.runWaiting(["merge-base", "--is-ancestor", ancestor, descendant]))?.succeeded == true
            },
            listBefore: { commit in
                let revision = "\(commit)^"
                guard let bytes = git.showWaiting(revision, TeamFile.fileName) else { return nil }
                let signature = git.showWaiting(revision, TeamFile.signatureFileName).map {
                    String(decoding: $0, as: UTF8.self)
                }
                return SignedMemberList(
                    bytes: [UInt8](bytes),
                    signature: signature,
                    commit: git.revisionWaiting(revision)
                )
            }
        )
    }

    /// The member list as `revision` holds it.
    func version(at revision: String) async -> SignedMemberList? {
        guard let bytes = await git.show(revision, TeamFile.fileName) else { return nil }
        let signature = await git.show(revision, TeamFile.signatureFileName).map { String(decoding: $0, as: UTF8.self) }
        return SignedMemberList(bytes: [UInt8](bytes), signature: signature, commit: await git.revision(revision))
    }

    /// Evaluates `revision`'s member list from this clone's anchor (or, with none, from the
    /// repository's first list), naming the commit and author of an untrusted newest list.
    func evaluate(at revision: String = "HEAD") async throws -> MembershipChain.Evaluation {
        let state = loadState()
        let anchor = state?.list
        let candidates = try await history(upTo: revision, since: anchor?.commit)
        let ancestry = self.ancestry
        var evaluation = try await BlockingPool.run {
            MembershipChain.evaluate(anchor: anchor, candidates: candidates, history: ancestry)
        }
        if var pending = evaluation.pending, let commit = pending.commit {
            pending.author = (try? await git.run(["log", "-1", "--format=%an <%ae>", commit]))?.output.trimmed
            evaluation.pending = pending
        }
        return evaluation
    }

    /// The member list to encrypt to: the trusted one. Throws when none can be trusted.
    func trustedTeam() async throws -> TeamFile {
        if let team = loadState()?.list?.team { return team }
        let evaluation = try await evaluate()
        guard let team = evaluation.trusted?.team else {
            throw CredentialError(
                .untrustedMembers,
                path: TeamFile.fileName,
                "No member list of this team store can be trusted (\(evaluation.pending?.reason ?? "none is signed")); nothing is encrypted to one.",
                hint: nil
            )
        }
        return team
    }

    /// Records `list` as trusted, keeping the synced head unless a new one is given.
    func trust(_ list: SignedMemberList, syncedHead: String? = nil) throws {
        let previous = loadState()
        try save(TrustState(list: list, syncedHead: syncedHead ?? previous?.syncedHead))
    }
}
