import CredentialFormats
import Foundation
import TestSupport
import Testing

@testable import PushStore
@testable import PushTeam

/// A member list is taken only along one signed line: two lists that each follow the same trusted
/// list on different lines of the history are a fork, refused on both sides until a list signed
/// by a member of both, descending from both, settles it. Real signatures; the history is a
/// commit graph given here.
struct MembershipForkTests {
    typealias Signing = MembershipSigningTests

    /// Commits and their parents; the member list each commit holds.
    final class Graph: @unchecked Sendable {
        var parents: [String: [String]] = [:]
        var lists: [String: SignedMemberList] = [:]

        @discardableResult
        func commit(_ name: String, parents: [String], _ list: SignedMemberList) -> SignedMemberList {
            var list = list
            list.commit = name
            self.parents[name] = parents
            lists[name] = list
            return list
        }

        func descends(_ descendant: String, _ ancestor: String) -> Bool {
            if descendant == ancestor { return true }
            return (parents[descendant] ?? []).contains { descends($0, ancestor) }
        }

        var history: MembershipHistory {
            MembershipHistory(
                descends: { self.descends($0, $1) },
                listBefore: { commit in self.parents[commit]?.first.flatMap { self.lists[$0] } }
            )
        }
    }

    struct Team {
        var alice, bob, carol, mallory: Signing.Person
        let graph: Graph
        /// Version 3: alice, bob and carol, as every clone synced it.
        var base: SignedMemberList
        /// Alice removes bob (version 4).
        var removal: SignedMemberList
        /// Bob, from version 3, adds mallory, signed with his own key.
        var fork: SignedMemberList

        init(bobsVersion: Int = 4) throws {
            let graph = Graph()
            self.graph = graph
            alice = try Signing.person("alice")
            bob = try Signing.person("bob")
            carol = try Signing.person("carol")
            mallory = try Signing.person("mallory")
            base = graph.commit(
                "c3",
                parents: [],
                try Signing.list([alice.member, bob.member, carol.member], version: 3, signedBy: alice)
            )
            removal = graph.commit(
                "a4",
                parents: ["c3"],
                try Signing.list([alice.member, carol.member], version: 4, signedBy: alice)
            )
            fork = graph.commit(
                "b4",
                parents: ["c3"],
                try Signing.list(
                    [alice.member, bob.member, carol.member, mallory.member],
                    version: bobsVersion,
                    signedBy: bob
                )
            )
            // Bob merges the remote's branch into his with `-s ours`: his list stays.
            graph.commit("m", parents: ["b4", "a4"], fork)
        }
    }

    func expectForked(_ evaluation: MembershipChain.Evaluation, keeping trusted: SignedMemberList) throws {
        #expect(evaluation.trusted == trusted)
        #expect(evaluation.accepted.isEmpty, "\(evaluation.accepted.map(\.commit))")
        let fork = try #require(evaluation.pending?.fork, "\(evaluation.pending?.reason ?? "no pending list")")
        #expect(Set(fork.sides.compactMap(\.commit)) == ["a4", "b4"])
        let bobs = try #require(fork.sides.first { $0.commit == "b4" })
        #expect(bobs.signer == "bob" && bobs.difference.added.map(\.name) == ["mallory"])
        #expect(bobs.refusal?.contains("signed by bob, whom the other side removed") == true, "\(bobs.refusal ?? "")")
        let alices = try #require(fork.sides.first { $0.commit == "a4" })
        #expect(alices.signer == "alice" && alices.refusal == nil && alices.difference.removed.map(\.name) == ["bob"])
        #expect(fork.settlers == ["alice", "carol"])
        #expect(evaluation.pending?.reason.contains("forked") == true)
    }

    @Test(arguments: [4, 5])
    func aForkByMergeIsRefusedOnBothSidesInEitherOrder(bobsVersion: Int) throws {
        let team = try Team(bobsVersion: bobsVersion)
        let merge = try #require(team.graph.lists["m"])
        for order in [[team.removal, team.fork, merge], [team.fork, team.removal, merge]] {
            let carol = MembershipChain.evaluate(anchor: team.base, candidates: order, history: team.graph.history)
            try expectForked(carol, keeping: team.base)
        }
    }

    @Test func theRemoverKeepsTheirListAndSeesTheFork() throws {
        let team = try Team()
        let merge = try #require(team.graph.lists["m"])
        let alice = MembershipChain.evaluate(
            anchor: team.removal,
            candidates: [team.fork, merge],
            history: team.graph.history
        )
        try expectForked(alice, keeping: team.removal)
    }

    @Test func aCloneThatTookTheRefusedSideFallsBackToTheListBothFollow() throws {
        let team = try Team()
        // Carol took bob's list (the remote was reset before the removal); alice's merge brings it.
        let evaluation = MembershipChain.evaluate(
            anchor: team.fork,
            candidates: [team.removal],
            history: team.graph.history
        )
        try expectForked(evaluation, keeping: team.base)
        #expect(evaluation.trusted?.team?.member(named: "mallory") == nil)
    }

    /// Bob, from version 3, answers alice's removal with a list that removes her: neither side can
    /// be taken. Alice's clone keeps her version 4 (never version 3, which still has bob) and may
    /// sign it again; a clone that trusted version 3 keeps it and may sign neither.
    @Test func aForkThatRemovesTheRemoverKeepsHerAnchor() throws {
        let team = try Team()
        let answer = team.graph.commit(
            "b4x",
            parents: ["c3"],
            try Signing.list([team.bob.member, team.carol.member, team.mallory.member], version: 4, signedBy: team.bob)
        )
        let alice = MembershipChain.evaluate(anchor: team.removal, candidates: [answer], history: team.graph.history)
        #expect(alice.trusted == team.removal)
        let fork = try #require(alice.pending?.fork)
        #expect(fork.sides.allSatisfy { $0.refusal?.contains("whom the other side removed") == true })
        #expect(fork.resignable == "a4")
        let carol = MembershipChain.evaluate(
            anchor: team.base,
            candidates: [team.removal, answer],
            history: team.graph.history
        )
        #expect(carol.trusted == team.base && carol.pending?.fork?.resignable == nil)
    }

    /// Alice replaced bob's signing key (version 4); a list signed with his old key on the line
    /// before is refused, though the other side still names bob.
    @Test func aSideSignedWithAKeyTheOtherSideReplacedIsNeverTaken() throws {
        let team = try Team()
        var rotated = try Signing.person("bob").member
        rotated.recipient = team.bob.member.recipient
        let rotation = team.graph.commit(
            "a4k",
            parents: ["c3"],
            try Signing.list([team.alice.member, rotated, team.carol.member], version: 4, signedBy: team.alice)
        )
        let alice = MembershipChain.evaluate(anchor: rotation, candidates: [team.fork], history: team.graph.history)
        #expect(alice.trusted == rotation)
        let fork = try #require(alice.pending?.fork)
        let bobs = try #require(fork.sides.first { $0.commit == "b4" })
        #expect(bobs.refusal?.contains("bob's signing key, which the other side replaced") == true, "\(bobs)")
        #expect(fork.sides.first { $0.commit == "a4k" }?.refusal == nil)
    }

    @Test func onlyAListSignedByAMemberOfBothSidesAndDescendingFromBothSettlesIt() throws {
        let team = try Team()
        let merge = try #require(team.graph.lists["m"])
        let kept = [team.alice.member, team.carol.member]
        let candidates = [team.removal, team.fork, merge]
        func settle(_ list: SignedMemberList, parents: [String]) -> MembershipChain.Evaluation {
            let graph = team.graph
            let settled = graph.commit("r-\(UUID().uuidString.prefix(6))", parents: parents, list)
            return MembershipChain.evaluate(
                anchor: team.base,
                candidates: candidates + [settled],
                history: graph.history
            )
        }
        // Bob, whom alice removed, cannot settle it, whatever version he signs.
        let byBob = settle(try Signing.list(kept + [team.bob.member], version: 9, signedBy: team.bob), parents: ["m"])
        #expect(byBob.trusted == team.base && byBob.pending?.fork != nil)
        #expect(byBob.pending?.reason.contains("forked") == true, "\(byBob.pending?.reason ?? "")")
        // Carol, a member of both, but on alice's line only (it does not descend from bob's).
        let oneLine = settle(try Signing.list(kept, version: 5, signedBy: team.carol), parents: ["a4"])
        #expect(oneLine.trusted == team.base)
        // Not numbered above both sides.
        let low = settle(try Signing.list(kept, version: 4, signedBy: team.alice), parents: ["m"])
        #expect(low.trusted == team.base)
        // Alice, a member of both, after both: taken, and the next change follows it as usual.
        let settled = settle(try Signing.list(kept, version: 5, signedBy: team.alice), parents: ["m"])
        #expect(settled.pending == nil, "\(settled.pending?.reason ?? "")")
        #expect(settled.trusted?.team?.members.map(\.name) == ["alice", "carol"])
        #expect(settled.accepted.map(\.signer.name) == ["alice"])
        #expect(settled.accepted.first?.difference.removed.map(\.name) == ["bob"])
    }

    @Test func twoMembersSignedChangesOnTwoLinesAreAForkTheirMergeSettles() throws {
        let alice = try Signing.person("alice")
        let bob = try Signing.person("bob")
        let carol = try Signing.person("carol")
        let dave = try Signing.person("dave")
        let graph = Graph()
        let base = graph.commit(
            "b",
            parents: [],
            try Signing.list([alice.member, bob.member], version: 2, signedBy: alice)
        )
        let aliceSide = graph.commit(
            "x",
            parents: ["b"],
            try Signing.list([alice.member, bob.member, carol.member], version: 3, signedBy: alice)
        )
        let bobSide = graph.commit(
            "y",
            parents: ["b"],
            try Signing.list([alice.member, bob.member, dave.member], version: 3, signedBy: bob)
        )
        let forked = MembershipChain.evaluate(anchor: base, candidates: [aliceSide, bobSide], history: graph.history)
        #expect(forked.trusted == base)
        let fork = try #require(forked.pending?.fork)
        #expect(fork.sides.allSatisfy { $0.refusal == nil } && fork.settlers == ["alice", "bob"])
        let union = graph.commit(
            "z",
            parents: ["x", "y"],
            try Signing.list([alice.member, bob.member, carol.member, dave.member], version: 4, signedBy: bob)
        )
        let merged = MembershipChain.evaluate(
            anchor: base,
            candidates: [aliceSide, bobSide, union],
            history: graph.history
        )
        #expect(merged.trusted == union && merged.pending == nil)
        // A list on one line that follows the other is no fork: a change after a change.
        let next = graph.commit(
            "n",
            parents: ["x"],
            try Signing.list([alice.member, carol.member], version: 4, signedBy: carol)
        )
        let line = MembershipChain.evaluate(anchor: base, candidates: [aliceSide, next], history: graph.history)
        #expect(line.trusted == next && line.pending == nil)
    }

    // MARK: Names and recipients

    @Test func namesAreASCIIAndComparedWithoutRegardToCase() throws {
        for name in ["carоl", "аlice", "zoë", "bob\u{200B}", "al ice", ""] {
            #expect(throws: CredentialError.self, "\(name)") { try TeamFile.validateName(name) }
        }
        for name in ["alice", "ci-deploy", "Carol", "j.doe@example"] { try TeamFile.validateName(name) }
        let alice = try Signing.person("alice")
        var upper = try Signing.person("carol").member
        upper.name = "Alice"
        let team = TeamFile(teamID: "0c4e5a1e-team", members: [alice.member, upper])
        #expect(team.problems.contains { $0.contains("names Alice twice") }, "\(team.problems)")
        #expect(team.member(named: "ALICE")?.recipient == alice.member.recipient)
        var lookAlike = upper
        lookAlike.name = "аlice"
        #expect(
            TeamFile(teamID: "0c4e5a1e-team", members: [alice.member, lookAlike]).problems
                .contains { $0.contains("is not one apnsctl accepts") }
        )
    }

    /// A store whose signed lists hold an `ssh-rsa` member, or `Carol` beside `carol`, stays
    /// trusted: the later rules hold for the members a version adds, not those it carries over.
    @Test func rulesAddedLaterHoldOnlyForTheMembersAVersionAdds() throws {
        let folder = try TemporaryFolder()
        func rsa(_ name: String) throws -> String {
            try CLI.runProgram("ssh-keygen", ["-q", "-t", "rsa", "-N", "", "-f", folder.path(name)]).succeeded()
            return try String(contentsOfFile: folder.path(name + ".pub"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let alice = try Signing.person("alice")
        let carol = try Signing.person("carol")
        let dave = try Signing.person("dave")
        let server = TeamFile.Member(name: "server", recipient: try rsa("server"))
        var upper = try Signing.person("twin").member
        upper.name = "Carol"
        func list(_ members: [TeamFile.Member], _ version: Int) throws -> SignedMemberList {
            try Signing.list(members, version: version, signedBy: alice)
        }
        func refusal(_ from: SignedMemberList?, _ to: SignedMemberList) -> String? {
            if case .failure(let refusal) = MembershipChain.verdict(from: from, to: to) { return refusal.reason }
            return nil
        }
        let trusted = try list([alice.member, server, carol.member], 3)
        #expect(refusal(nil, trusted)?.contains("ssh-ed25519") == true, "a first list meets every rule")
        #expect(refusal(trusted, try list([alice.member, server, carol.member, dave.member], 4)) == nil)
        let build = TeamFile.Member(name: "build", recipient: try rsa("build"))
        let addsRSA = refusal(trusted, try list([alice.member, server, carol.member, build], 4))
        #expect(addsRSA?.contains("the recipient of build is not") == true, "\(addsRSA ?? "taken")")
        let addsTwin = refusal(trusted, try list([alice.member, server, carol.member, upper], 4))
        #expect(addsTwin?.contains("names Carol twice") == true, "\(addsTwin ?? "taken")")
        // Both names were there before: the next version carries them on.
        let twins = try list([alice.member, carol.member, upper], 5)
        #expect(refusal(twins, try list([alice.member, carol.member, upper, dave.member], 6)) == nil)
        #expect(refusal(twins, try list([alice.member, carol.member, upper, upper], 6)) != nil)
    }

    @Test func recipientsAreAgeOrSSHEd25519Only() async throws {
        let folder = try TemporaryFolder()
        for type in ["ed25519", "rsa"] {
            try CLI.runProgram("ssh-keygen", ["-q", "-t", type, "-N", "", "-f", folder.path(type)]).succeeded()
        }
        let ed25519 = try String(contentsOfFile: folder.path("ed25519.pub"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let rsa = try String(contentsOfFile: folder.path("rsa.pub"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(TeamFile.isRecipient(ed25519))
        #expect(TeamFile.isRecipient(try Signing.recipient()))
        #expect(!TeamFile.isRecipient(rsa))
        let error = try await #require(throws: CredentialError.self) { try await AgeTool().validate(recipient: rsa) }
        #expect(error.message.contains("ssh-rsa"), "\(error.message)")
        try await AgeTool().validate(recipient: ed25519)
    }
}
