import Foundation
import Testing

@testable import PushStore
@testable import PushTeam

/// The team store's three-way merge of two clones' indexes and member lists, without git.
struct TeamMergeTests {
    static func certificate(_ alias: String, sha: String) -> StoredCredential {
        StoredCredential(
            alias: alias,
            kind: .certificate,
            topics: ["com.example.app"],
            environments: [.sandbox],
            importedAt: Date(timeIntervalSince1970: 1_800_000_000),
            secret: .privateKey,
            certificateFile: "credentials/\(alias).\(sha).cert.pem",
            sha256: sha
        )
    }

    static func index(_ credentials: [StoredCredential]) -> StoreIndex {
        var index = StoreIndex()
        index.credentials = credentials
        return index
    }

    @Test func changesOnDifferentSidesAreBothKept() {
        let shared = Self.certificate("shared", sha: "AA")
        let base = Self.index([shared])
        let ours = Self.index([shared, Self.certificate("one", sha: "01")])
        let theirs = Self.index([Self.certificate("two", sha: "02")])
        let outcome = TeamMerge.index(base: base, ours: ours, theirs: theirs, keep: [:])
        #expect(outcome.conflicts.isEmpty)
        // Theirs removed "shared", ours added "one": both changes stand.
        #expect(outcome.index.credentials.map(\.alias) == ["one", "two"])
    }

    @Test func theSameAliasChangedOnBothSidesIsAConflictUntilASideIsChosen() {
        let base = Self.index([Self.certificate("app", sha: "AA")])
        let ours = Self.index([Self.certificate("app", sha: "BB")])
        let theirs = Self.index([Self.certificate("app", sha: "CC")])
        let stopped = TeamMerge.index(base: base, ours: ours, theirs: theirs, keep: [:])
        #expect(stopped.conflicts.map(\.alias) == ["app"])
        #expect(stopped.conflicts.first?.ours?.sha256 == "BB")
        #expect(stopped.conflicts.first?.theirs?.sha256 == "CC")

        let kept = TeamMerge.index(base: base, ours: ours, theirs: theirs, keep: ["app": .theirs])
        #expect(kept.conflicts.isEmpty)
        #expect(kept.index.credentials.map(\.sha256) == ["CC"])
        #expect(kept.discarded.map(\.sha256) == ["BB"])
        // The same change made on both sides is no conflict.
        let same = TeamMerge.index(base: base, ours: ours, theirs: ours, keep: [:])
        #expect(same.conflicts.isEmpty)
    }

    @Test func membersAddedAndRemovedOnEitherSideAreKept() {
        func member(_ name: String) -> TeamFile.Member {
            TeamFile.Member(name: name, recipient: "age1\(name)", addedAt: Date(), addedBy: nil)
        }
        let base = TeamFile(teamID: "t", members: [member("alice"), member("bob")])
        let ours = TeamFile(teamID: "t", members: [member("alice"), member("bob"), member("carol")])
        let theirs = TeamFile(teamID: "t", members: [member("alice")])
        let merged = TeamMerge.members(base: base, ours: ours, theirs: theirs)
        #expect(merged.members.map(\.name) == ["alice", "carol"])
        // Names compare without regard to case: a "Carol" added on the other side is carol, not a second member.
        let twin = TeamFile(teamID: "t", members: [member("alice"), member("bob"), member("Carol")])
        let once = TeamMerge.members(base: base, ours: ours, theirs: twin)
        #expect(once.members.map(\.name) == ["alice", "bob", "carol"])
    }

    @Test func secretFileNamesRoundTrip() {
        let item = SecretItem(store: "s", alias: "com.example.app-sandbox", kind: .privateKey, identifier: "ab12")
        let name = (TeamSecretStore.relativePath(of: item) as NSString).lastPathComponent
        #expect(name == "com.example.app-sandbox.private-key.ab12.age")
        #expect(TeamSecretStore.item(fromFileName: name, store: "s") == item)
    }
}
