import Foundation
import TestSupport
import Testing

/// A removed member who can still push tries to put an outsider on the team through a fork of
/// the member list: by merging the remote's branch into his own with `-s ours`, and by resetting
/// the remote to before the removal. alice, bob and carol have all synced version 3; alice removes
/// bob. Over ssh on loopback, each member with their own Secret Service; decryption is asked of
/// the age CLI.
@Suite(.serialized, .needsSecretService)
struct TeamForkTests {
    typealias Member = TeamStoreTests.Member

    /// Three members who have all synced version 3 of the list, a credential imported, bob's keys
    /// as he kept them, and an outsider's.
    final class Team: @unchecked Sendable {
        let work: TemporaryFolder
        let fixtures: TemporaryFolder
        let ssh: LoopbackSSH
        let remote: String
        let keyrings: [MemberKeyring]
        let alice: Member
        let bob: Member
        let carol: Member
        let mallory: OutsiderKeys
        /// Bob's signing key file and age identity, recovered from his keyring.
        var bobKey = ""
        var bobIdentity = ""
        var aliceIdentity = ""
        var round = 0

        init() throws {
            work = try TemporaryFolder()
            fixtures = try TemporaryFolder()
            let bare = try TeamStoreTests.bareRemote(in: work)
            ssh = try LoopbackSSH(work)
            remote = ssh.url(bare)
            let transport = ["GIT_SSH_COMMAND": ssh.gitSSHCommand]
            keyrings = [try MemberKeyring(work, name: "bob"), try MemberKeyring(work, name: "carol")]
            alice = Member(name: "alice", store: work.path("alice"), environment: transport)
            bob = Member(
                name: "bob",
                store: work.path("bob"),
                environment: keyrings[0].environment.merging(transport) { $1 }
            )
            carol = Member(
                name: "carol",
                store: work.path("carol"),
                environment: keyrings[1].environment.merging(transport) { $1 }
            )
            mallory = try OutsiderKeys(work, name: "mallory")
            try alice.run(["team", "init", remote, "--name", "alice"]).succeeded()
            try importNew(by: alice)
            for member in [bob, carol] {
                let joined = try member.run(["team", "join", remote, "--name", member.name]).succeeded()
                try alice.run(try TeamStoreTests.addCommand(in: joined.stdout)).succeeded()
            }
            for member in [bob, carol] {
                try member.run(["team", "sync"]).succeeded()
            }
            let shown = try CLI.runProgram("git", ["-C", carol.store, "show", "HEAD:team.json"]).stdout
            let list = try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any]
            #expect(list?["version"] as? Int == 3, "\(shown)")
            bobKey = try TeamTrustSupport.signingKeyFile(
                of: "bob",
                in: bob.store,
                environment: keyrings[0].environment,
                folder: work
            )
            bobIdentity = try TeamTrustSupport.identity(of: "bob", in: bob.store, environment: keyrings[0].environment)
            aliceIdentity = try TeamTrustSupport.identity(of: "alice", in: alice.store, environment: [:])
            #expect(bobIdentity.hasPrefix("AGE-SECRET-KEY-1") && aliceIdentity.hasPrefix("AGE-SECRET-KEY-1"))
        }

        var transport: [String: String] { ["GIT_SSH_COMMAND": ssh.gitSSHCommand] }

        /// Imports a new certificate as `member`; returns its secret file in that member's clone.
        @discardableResult
        func importNew(by member: Member) throws -> String {
            round += 1
            let bundle = "com.example.fork\(round)"
            let certificate = try TestPKI.mint(in: fixtures, name: "fork\(round)", bundle: bundle, days: 300)
            try member.run(["import", certificate]).succeeded()
            return try TeamTrustSupport.secretFile(of: "\(bundle)-universal", in: member.store)
        }

        /// Bob's list from version 3: mallory added (or `removing` taken off), signed with his own
        /// key (as ssh-keygen signs it).
        func bobsFork(from pusher: Pusher, removing: String? = nil) throws -> String {
            let path = pusher.clone + "/team.json"
            var team = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
            )
            var members = team["members"] as? [[String: Any]] ?? []
            #expect(team["version"] as? Int == 3 && members.count == 3)
            team["version"] = 4
            if let removing {
                members.removeAll { $0["name"] as? String == removing }
            } else {
                members.append(mallory.entry(like: members[0]))
            }
            team["members"] = members
            try JSONSerialization.data(withJSONObject: team, options: [.prettyPrinted, .sortedKeys])
                .write(to: URL(fileURLWithPath: path))
            try? FileManager.default.removeItem(atPath: path + ".sig")
            try CLI.runProgram("ssh-keygen", ["-Y", "sign", "-f", bobKey, "-n", "apnsctl-team", path]).succeeded()
            #expect(try pusher.git(["add", "--all"]).status == 0)
            #expect(try pusher.git(["commit", "--quiet", "-m", "Add member mallory"]).status == 0)
            return try pusher.git(["rev-parse", "HEAD"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// The branch the team's repository uses, as a plain clone sees it.
        func branch(of pusher: Pusher) throws -> String {
            try pusher.git(["rev-parse", "--abbrev-ref", "HEAD"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// The version of the member list `member`'s clone trusts.
        func trustedVersion(of member: Member) throws -> Int? {
            let state = try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: member.store + "/.git/apnsctl-trust.json"))
            )
            let members = try #require((state as? [String: Any])?["members"] as? String)
            let list = try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: members)))
            return (list as? [String: Any])?["version"] as? Int
        }

        func head(of member: Member) throws -> String {
            try member.git(["rev-parse", "HEAD"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Neither bob nor mallory opens a secret written now by `member`; alice does.
        func expectShutOut(writtenBy member: Member, bob bobShutOut: Bool = true) throws {
            let file = try importNew(by: member)
            #expect(try !TeamTrustSupport.decrypts(mallory.identity, file), "mallory reads \(file)")
            if bobShutOut { #expect(try !TeamTrustSupport.decrypts(bobIdentity, file), "bob reads \(file)") }
            #expect(try TeamTrustSupport.decrypts(aliceIdentity, file))
        }
    }

    /// What a sync says of the fork: both commits and signers, the list kept, the settling
    /// command for alice's side only, and never --restore-members.
    static func expectFork(_ said: String, removal: String, fork: String, store: String) {
        #expect(said.contains("The member list is forked"), "\(said)")
        #expect(said.contains(String(removal.prefix(12))) && said.contains(String(fork.prefix(12))), "\(said)")
        #expect(said.contains("signed by alice") && said.contains("signed by bob"), "\(said)")
        #expect(said.contains("whom the other side removed"), "\(said)")
        #expect(said.contains("apnsctl team sync --resolve-fork \(removal.prefix(12)) --store \(store)"), "\(said)")
        #expect(!said.contains("--resolve-fork \(fork.prefix(12))"), "\(said)")
        #expect(!said.contains("--restore-members"), "\(said)")
    }

    @Test func aForkByMergeIsRefusedUntilAMemberOfBothSidesSettlesIt() throws {
        let team = try Team()
        let (alice, carol) = (team.alice, team.carol)
        let bobPusher = try Pusher(team.work, name: "bob", remote: team.remote, environment: team.transport)
        try alice.run(["team", "remove", "bob"]).succeeded()
        let removal = try team.head(of: alice)
        let fork = try team.bobsFork(from: bobPusher)
        #expect(try bobPusher.git(["fetch", "--quiet", "origin"]).status == 0)
        let branch = try team.branch(of: bobPusher)
        try bobPusher.git(["merge", "--quiet", "-s", "ours", "-m", "Merge", "origin/\(branch)"]).succeeded()
        try bobPusher.git(["push", "--quiet", "origin", "HEAD:\(branch)"])
            .succeeded(context: "a fast-forward")

        // Carol, who has not synced the removal, refuses both lists and keeps version 3.
        let carolSync = try carol.run(["team", "sync"]).exited(1)
        Self.expectFork(carolSync.stdout + carolSync.stderr, removal: removal, fork: fork, store: carol.store)
        #expect(!carolSync.stdout.contains("adds mallory"), "nothing is taken: \(carolSync.stdout)")
        let restore = try carol.run(["team", "sync", "--restore-members"])
        #expect(restore.status != 0, "\(restore.stdout)\(restore.stderr)")
        #expect(
            restore.stderr.contains("forked") && restore.stderr.contains("nothing was restored"),
            "\(restore.stderr)"
        )
        let status = try carol.run(["team", "status"])
        #expect(status.stdout.contains("The member list is forked"), "\(status.stdout)")
        #expect(!status.stdout.contains("--restore-members"), "\(status.stdout)")
        // Her next import is not for mallory (bob, whom she has not seen removed, still reads it).
        try team.expectShutOut(writtenBy: carol, bob: false)

        // Alice keeps her list, and settles the fork with it.
        let aliceSync = try alice.run(["team", "sync"]).exited(1)
        Self.expectFork(aliceSync.stdout + aliceSync.stderr, removal: removal, fork: fork, store: alice.store)
        try team.expectShutOut(writtenBy: alice)
        let alicesOwn = "com.example.fork\(team.round)-universal"
        let refusedSide = try alice.run(["team", "sync", "--resolve-fork", String(fork.prefix(12))])
        #expect(refusedSide.status != 0 && refusedSide.stderr.contains("whom the other side removed"))
        let settled = try alice.run(["team", "sync", "--resolve-fork", String(removal.prefix(12))])
            .succeeded(stdout: "Settled the forked member list", "secret(s) again to the settled member list")
        // Bob's -s ours merge put back the secrets as they were before the removal: named for rotation.
        #expect(settled.stderr.contains("rotate each one") && settled.stderr.contains("for bob"), "\(settled.stderr)")
        // What alice wrote herself she knows the recipients of: it is not named.
        #expect(!settled.stderr.contains(alicesOwn), "\(settled.stderr)")

        // Carol takes alice's settling list: bob and mallory are shut out of what she writes next.
        try carol.run(["team", "sync"]).succeeded(stdout: "signed by alice", "removes bob")
        try team.expectShutOut(writtenBy: carol)
    }

    /// Bob answers his removal with a list of version 3's line that removes alice: neither side
    /// can be taken. Alice's clone keeps her version 4 (never the version 3 bob is still on), and
    /// every command it prints names a commit.
    @Test func aForkRemovingTheRemoverLeavesHerTrustAsItWas() throws {
        let team = try Team()
        let alice = team.alice
        let bobPusher = try Pusher(team.work, name: "bob", remote: team.remote, environment: team.transport)
        try alice.run(["team", "remove", "bob"]).succeeded()
        let removal = try team.head(of: alice)
        let fork = try team.bobsFork(from: bobPusher, removing: "alice")
        #expect(try bobPusher.git(["fetch", "--quiet", "origin"]).status == 0)
        let branch = try team.branch(of: bobPusher)
        #expect(try bobPusher.git(["merge", "--quiet", "-s", "ours", "-m", "Merge", "origin/\(branch)"]).status == 0)
        #expect(try bobPusher.git(["push", "--quiet", "origin", "HEAD:\(branch)"]).status == 0)

        let synced = try alice.run(["team", "sync"])
        let said = synced.stdout + synced.stderr
        #expect(synced.status == 1, "\(said)")
        #expect(said.contains("The member list is forked") && said.contains("Neither side can be taken"), "\(said)")
        #expect(
            said.contains("apnsctl team sync --resolve-fork \(removal.prefix(12)) --store \(alice.store)"),
            "\(said)"
        )
        #expect(!said.contains("--resolve-fork \(fork.prefix(12))") && !said.contains("()"), "\(said)")
        #expect(try team.trustedVersion(of: alice) == 4)
        try team.expectShutOut(writtenBy: alice)
        let restore = try alice.run(["team", "sync", "--restore-members"])
        #expect(
            restore.status != 0 && restore.stderr.contains("--resolve-fork \(removal.prefix(12))"),
            "\(restore.stderr)"
        )
        #expect(!restore.stderr.contains("()"), "\(restore.stderr)")
        #expect(try team.trustedVersion(of: alice) == 4)

        // The printed command, as printed: alice signs her list again, above both sides.
        try alice.run([
            "team", "sync", "--resolve-fork", String(removal.prefix(12)), "--store", alice.store,
        ]).succeeded()
        #expect(try team.trustedVersion(of: alice) == 5)
        try team.expectShutOut(writtenBy: alice)
    }

    @Test func aForkByResetIsTakenByAStaleCloneAndTheRemoverIsWarned() throws {
        let team = try Team()
        let (alice, carol) = (team.alice, team.carol)
        let bobPusher = try Pusher(team.work, name: "bob", remote: team.remote, environment: team.transport)
        try alice.run(["team", "remove", "bob"]).succeeded()
        let removal = try team.head(of: alice)
        let fork = try team.bobsFork(from: bobPusher)
        try bobPusher.git([
            "push", "--quiet", "--force", "origin", "HEAD:\(try team.branch(of: bobPusher))",
        ]).succeeded()

        // The known limit: a clone that never saw the removal cannot see it was rewritten away.
        try carol.run(["team", "sync"]).succeeded(stdout: "signed by bob", "adds mallory")
        let readable = try team.importNew(by: carol)
        #expect(try TeamTrustSupport.decrypts(team.mallory.identity, readable), "the documented limit")
        #expect(try carol.run(["team", "sync"]).status == 0)

        // The remover is stopped, then, accepting the rewrite, told of the fork and of the secret to rotate.
        try alice.run(["team", "sync"]).exited(1, stderr: "history was rewritten")
        let accepted = try alice.run(["team", "sync", "--accept-rewrite"]).exited(1)
        Self.expectFork(accepted.stdout + accepted.stderr, removal: removal, fork: fork, store: alice.store)
        let alias = "com.example.fork\(team.round)-universal"
        let rotation = try #require(
            accepted.stderr.split(separator: "\n").first { $0.contains(alias) },
            "\(accepted.stderr)"
        )
        #expect(rotation.contains("mallory") && rotation.contains("--replace \(alias) --store \(alice.store)"))
        try team.expectShutOut(writtenBy: alice)
        try alice.run(["team", "sync", "--resolve-fork", String(removal.prefix(12))]).succeeded()
        #expect(
            try !TeamTrustSupport.decrypts(
                team.mallory.identity,
                try TeamTrustSupport.secretFile(of: alias, in: alice.store)
            )
        )

        // Carol, told of the fork by alice's merge, leaves bob's list and takes alice's.
        try carol.run(["team", "sync"]).succeeded(stdout: "signed by alice")
        try team.expectShutOut(writtenBy: carol)
    }

    /// Two members' own signed changes made at the same time are a fork too: the sync of a member
    /// of both sides merges them, signed by that member, which settles it on every clone.
    @Test func twoMembersChangesAtOnceAreMergedAndSigned() throws {
        let work = try TemporaryFolder()
        let fixtures = try TemporaryFolder()
        let (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        let keyring = try MemberKeyring(work, name: "bob")
        let bob = Member(name: "bob", store: work.path("bob"), environment: keyring.environment)
        let joined = try bob.run(["team", "join", bare, "--name", "bob"])
        #expect(try alice.run(try TeamStoreTests.addCommand(in: joined.stdout)).status == 0)
        #expect(try bob.run(["team", "sync"]).status == 0)
        let (dave, erin) = (try TeamStoreTests.newIdentity(), try TeamStoreTests.newIdentity())
        // Alice adds dave while the remote is away (committed here only); bob adds erin meanwhile.
        try FileManager.default.moveItem(atPath: bare, toPath: bare + ".away")
        try alice.run(["team", "add", "dave", dave.recipient]).succeeded()
        try FileManager.default.moveItem(atPath: bare + ".away", toPath: bare)
        #expect(try bob.run(["team", "add", "erin", erin.recipient]).status == 0)

        try alice.run(["team", "sync"]).succeeded(stdout: "signed by alice", "adds erin")
        try bob.run(["team", "sync"]).succeeded(stdout: "signed by alice", "adds dave")
        let certificate = try TestPKI.mint(in: fixtures, name: "both", bundle: "com.example.both", days: 300)
        #expect(try bob.run(["import", certificate]).status == 0)
        let file = try TeamTrustSupport.secretFile(of: "com.example.both-universal", in: bob.store)
        #expect(try TeamTrustSupport.decrypts(dave.identity, file) && TeamTrustSupport.decrypts(erin.identity, file))
    }

    @Test func namesAreASCIIWithoutRegardToCaseAndRecipientsEd25519() throws {
        let work = try TemporaryFolder()
        let (_, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        let carol = try TeamStoreTests.newIdentity()
        #expect(try alice.run(["team", "add", "carol", carol.recipient]).status == 0)
        for name in ["Carol", "ALICE"] {
            let twin = try alice.run(["team", "add", name, try TeamStoreTests.newIdentity().recipient])
            #expect(twin.status != 0 && twin.stderr.contains("already has a member named"), "\(name): \(twin.stderr)")
        }
        for name in ["carоl", "аlice"] {
            let lookAlike = try alice.run(["team", "add", name, try TeamStoreTests.newIdentity().recipient])
            #expect(lookAlike.status == 64 || lookAlike.status == 2, "\(lookAlike.status)")
            #expect(lookAlike.stderr.contains("ASCII letters"), "\(lookAlike.stderr)")
        }
        try CLI.runProgram("ssh-keygen", ["-q", "-t", "rsa", "-N", "", "-f", work.path("rsa")]).succeeded()
        let rsa = try String(contentsOfFile: work.path("rsa.pub"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = try alice.run(["team", "add", "server", rsa])
        #expect(refused.status != 0 && refused.stderr.contains("ssh-rsa"), "\(refused.stderr)")
        let members = try String(contentsOfFile: alice.store + "/team.json", encoding: .utf8)
        #expect(!members.contains("ssh-rsa") && !members.contains("Carol"))
    }
}
