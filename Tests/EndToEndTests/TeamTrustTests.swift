import Foundation
import TestSupport
import Testing

/// Whoever can push to a team's repository without being a trusted member: an outsider adding
/// themselves (unsigned, or signed with their own key), replacing a recipient, emptying the list,
/// naming a member twice, a removed member signing themselves back in. After each, the next import
/// by a trusted member is encrypted to the trusted members only (checked with the age CLI), and
/// `team sync` exits 1 naming the commit, its author and the change. Over a path and over ssh.
@Suite(.serialized, .needsSecretService)
struct TeamTrustTests {
    typealias Member = TeamStoreTests.Member

    /// A version well above any a member signed: the refusal must come from the signature.
    static func raiseVersion(_ team: inout [String: Any]) {
        team["version"] = (team["version"] as? Int ?? 1) + 50
    }

    @Test(arguments: ["path", "ssh"])
    func onlyTrustedMembersChangeWhoTheSecretsGoTo(_ transport: String) throws {
        let work = try TemporaryFolder()
        let fixtures = try TemporaryFolder()
        let bare = try TeamStoreTests.bareRemote(in: work)
        var remote = bare
        var transportEnvironment: [String: String] = [:]
        var ssh: LoopbackSSH?
        if transport == "ssh" {
            let server = try LoopbackSSH(work)
            ssh = server
            remote = server.url(bare)
            transportEnvironment = ["GIT_SSH_COMMAND": server.gitSSHCommand]
        }
        defer { _ = ssh }
        let keyringB = try MemberKeyring(work, name: "bob")
        let alice = Member(name: "alice", store: work.path("alice"), environment: transportEnvironment)
        let bob = Member(
            name: "bob",
            store: work.path("bob"),
            environment: keyringB.environment.merging(transportEnvironment) { $1 }
        )

        // Alice founds the team; Bob joins and sees whom he now trusts, with fingerprints.
        let started = try alice.run(["team", "init", remote, "--name", "alice"]).succeeded()
        let aliceKey = try #require(
            started.stdout.split(separator: "\n").first { $0.contains("signing key:") }?.split(separator: " ").last
        )
        #expect(aliceKey.hasPrefix("SHA256:"))
        let first = try TestPKI.mint(in: fixtures, name: "first", bundle: "com.example.first", days: 300)
        #expect(try alice.run(["import", first]).status == 0)
        let joined = try bob.run(["team", "join", remote, "--name", "bob"]).succeeded(stdout: "alice", String(aliceKey))
        try alice.run(try TeamStoreTests.addCommand(in: joined.stdout)).succeeded()
        // Bob's sync takes the signed change and says who signed it.
        try bob.run(["team", "sync"]).succeeded(stdout: "signed by alice (\(aliceKey))", "adds bob")
        #expect(try bob.run(["check", "com.example.first-universal"]).status == 0)
        // A member with no signing key (CI) reads, and cannot change the members.
        let ciKeys = try TeamStoreTests.newIdentity()
        #expect(try alice.run(["team", "add", "ci", ciKeys.recipient]).status == 0)
        let ci = Member(
            name: "ci",
            store: work.path("ci"),
            environment: transportEnvironment.merging(["APNSCTL_IDENTITY": ciKeys.identity]) { $1 },
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]
        )
        try CLI.runProgram("git", ["clone", "--quiet", remote, ci.store], environment: transportEnvironment).succeeded()
        let ciStatus = try ci.run(["team", "status"])
        #expect(
            ciStatus.status == 0 && !ciStatus.stdout.contains("not trusted"),
            "\(ciStatus.stdout)\(ciStatus.stderr)"
        )
        #expect(try ci.run(["check", "com.example.first-universal"]).status == 0)
        try ci.run(["team", "add", "eve", ciKeys.recipient]).exited(2, stderr: "signing key")

        let mallory = try OutsiderKeys(work, name: "mallory")
        let outsider = try Pusher(work, name: "mallory", remote: remote, environment: transportEnvironment)
        let aliceIdentity = try TeamTrustSupport.identity(of: "alice", in: alice.store, environment: [:])
        #expect(aliceIdentity.hasPrefix("AGE-SECRET-KEY-1"), "the identity is kept as the line age reads")

        var round = 0
        /// After the outsider's push: sync refuses and names it, an import reaches only the trusted
        /// members, status shows it, and --restore-members puts the trusted list back.
        func expectRefused(_ words: [String], commit: String, importFirst: Bool = false) throws {
            round += 1
            let bundle = "com.example.after\(round)"
            let certificate = try TestPKI.mint(in: fixtures, name: "after\(round)", bundle: bundle, days: 300)
            if importFirst {
                // Imported before the sync: this clone's commit and the outsider's diverge (a merge).
                #expect(try alice.run(["import", certificate]).status == 0)
            }
            let synced = try alice.run(["team", "sync"])
            let said = synced.stdout + synced.stderr
            #expect(synced.status == 1, "\(said)")
            #expect(said.contains(String(commit.prefix(12))) && said.contains("Mallory"), "\(said)")
            for word in words { #expect(said.contains(word), "\(word): \(said)") }
            #expect(said.contains("apnsctl team sync --restore-members --store"), "\(said)")
            if !importFirst { #expect(try alice.run(["import", certificate]).status == 0) }
            let file = try TeamTrustSupport.secretFile(of: "\(bundle)-universal", in: alice.store)
            #expect(try !TeamTrustSupport.decrypts(mallory.identity, file), "the outsider reads \(file)")
            #expect(try TeamTrustSupport.decrypts(aliceIdentity, file))
            #expect(try TeamTrustSupport.decrypts(ciKeys.identity, file))
            let status = try alice.run(["team", "status"])
            #expect(status.stdout.contains("is not trusted"), "\(status.stdout)")
            try alice.run(["team", "sync", "--restore-members"]).succeeded()
            let clean = try alice.run(["team", "sync"])
            #expect(clean.status == 0 && !clean.stderr.contains("not trusted"), "\(clean.stdout)\(clean.stderr)")
            // Bob, who trusts alice, takes her restored list.
            try bob.run(["team", "sync"]).succeeded()
        }

        // A non-member adds herself, unsigned; the merge case (alice imported meanwhile).
        var commit = try outsider.editMembers(message: "add mallory") { _, members in
            members.append(Pusher.entry(name: "mallory", recipient: mallory.recipient, like: members[0]))
        }
        try expectRefused(
            ["signature by", "does not match the list", "adds mallory"],
            commit: commit,
            importFirst: true
        )
        // The same, signed with her own key, fast-forward.
        commit = try outsider.editMembers(signWith: mallory.signingKeyFile, message: "add mallory") { team, members in
            Self.raiseVersion(&team)
            members.append(mallory.entry(like: members[0]))
        }
        try expectRefused(["who is not a trusted member", "adds mallory"], commit: commit)
        // Signed by a key that is no member's at all.
        commit = try outsider.editMembers(signWith: mallory.signingKeyFile, message: "tidy") { team, _ in
            Self.raiseVersion(&team)
        }
        try expectRefused(["the key of no trusted member"], commit: commit)
        // Alice's recipient replaced by Mallory's.
        commit = try outsider.editMembers(message: "rotate alice") { _, members in
            members[0]["recipient"] = mallory.recipient
        }
        try expectRefused(["replaces alice"], commit: commit)
        // An emptied list; then a signed add of carol keeps everyone trusted.
        commit = try outsider.editMembers(message: "empty") { _, members in members = [] }
        try expectRefused(["removes alice"], commit: commit)
        // A name twice.
        commit = try outsider.editMembers(message: "twin") { _, members in
            members.append(Pusher.entry(name: "alice", recipient: mallory.recipient, like: members[0]))
        }
        try expectRefused(["names alice twice"], commit: commit)

        // A removed member signs themselves back in with their own (once trusted) key.
        try alice.run(["team", "remove", "bob"]).succeeded()
        let bobKey = try TeamTrustSupport.signingKeyFile(
            of: "bob",
            in: bob.store,
            environment: keyringB.environment,
            folder: work
        )
        let bobIdentity = try TeamTrustSupport.identity(of: "bob", in: bob.store, environment: keyringB.environment)
        let bobPusher = try Pusher(work, name: "bob", remote: remote, environment: transportEnvironment)
        let bobPublic = try CLI.runProgram("ssh-keygen", ["-y", "-f", bobKey]).stdout
            .split(separator: " ").prefix(2).joined(separator: " ")
        let back = try bobPusher.editMembers(signWith: bobKey, message: "back") { team, members in
            Self.raiseVersion(&team)
            members.append(
                Pusher.entry(
                    name: "bob",
                    recipient: (try? TeamStoreTests.newIdentity().recipient) ?? "",
                    signingKey: bobPublic,
                    like: members[0]
                )
            )
        }
        let refusedBob = try alice.run(["team", "sync"]).exited(1)
        #expect(refusedBob.stderr.contains(String(back.prefix(12))), "\(refusedBob.stderr)")
        #expect(refusedBob.stderr.contains("signed by bob"), "\(refusedBob.stderr)")
        let later = try TestPKI.mint(in: fixtures, name: "later", bundle: "com.example.later", days: 300)
        #expect(try alice.run(["import", later]).status == 0)
        let laterFile = try TeamTrustSupport.secretFile(of: "com.example.later-universal", in: alice.store)
        #expect(try !TeamTrustSupport.decrypts(bobIdentity, laterFile), "a removed member reads a new secret")
        #expect(try TeamTrustSupport.decrypts(aliceIdentity, laterFile))
    }
}
