import Foundation
import TestSupport
import Testing

/// Two members changing a team store (reached by path) at the same time: different credentials
/// merge, the same alias stops the later sync, nothing is force-pushed and no commit is lost;
/// a certificate swapped in the repository is refused as tampered.
@Suite(.serialized, .needsSecretService)
struct TeamSyncTests {
    typealias Member = TeamStoreTests.Member

    @Test func concurrentChangesMergeAndTheSameAliasStopsTheLaterSync() throws {
        let work = try TemporaryFolder()
        let fixtures = try TemporaryFolder()
        let (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        let keyringB = try MemberKeyring(work, name: "bob")
        // A uses the Secret Service the suite runs in; B a session of its own.
        let bob = Member(name: "bob", store: work.path("bob"), environment: keyringB.environment)
        let joined = try bob.run(["team", "join", bare, "--name", "bob"]).succeeded()
        #expect(try alice.run(try TeamStoreTests.addCommand(in: joined.stdout)).status == 0)
        #expect(try bob.run(["team", "sync"]).status == 0)

        // Different apps at the same time: B's push is refused, and B's sync merges both.
        let one = try TestPKI.mint(in: fixtures, name: "one", bundle: "com.example.one", days: 300)
        let two = try TestPKI.mint(in: fixtures, name: "two", bundle: "com.example.two", days: 300)
        #expect(try alice.run(["import", one]).status == 0)
        try bob.run(["import", two]).succeeded(stderr: "apnsctl team sync")
        try bob.run(["team", "sync"]).succeeded()
        #expect(try alice.run(["team", "sync"]).status == 0)
        for member in [alice, bob] {
            let list = try member.run(["list"]).stdout
            #expect(list.contains("com.example.one-universal") && list.contains("com.example.two-universal"), "\(list)")
            #expect(try member.run(["check", "com.example.one-universal", "com.example.two-universal"]).status == 0)
        }

        // The same alias from both: the later sync stops and names the alias and both versions.
        let mine = try TestPKI.mint(in: fixtures, name: "same-a", bundle: "com.example.same", days: 300)
        let theirs = try TestPKI.mint(in: fixtures, name: "same-b", bundle: "com.example.same", days: 310)
        #expect(try alice.run(["import", mine]).status == 0)
        #expect(try bob.run(["import", theirs]).status == 0)
        let stopped = try bob.run(["team", "sync"])
            .exited(1, stderr: "com.example.same-universal was changed both here and on the remote")
        let aliceSHA = try TeamStoreTests.fingerprint(ofCertificateIn: mine)
        let bobSHA = try TeamStoreTests.fingerprint(ofCertificateIn: theirs)
        #expect(stopped.stderr.contains(String(aliceSHA.prefix(11))), "\(stopped.stderr)")
        #expect(stopped.stderr.contains(String(bobSHA.prefix(11))), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("apnsctl team sync --keep-theirs com.example.same-universal"))
        // Settled as the message says: every commit of both sides reaches the remote.
        try bob.run(["team", "sync", "--keep-theirs", "com.example.same-universal"]).succeeded()
        #expect(
            try TeamStoreTests.sha256(of: bob.run(["list", "--json"]), alias: "com.example.same-universal") == aliceSHA
        )
        #expect(try bob.run(["check", "com.example.same-universal"]).status == 0)
        let log = try CLI.runProgram("git", ["-C", bare, "log", "--all", "--format=%s"]).stdout
        #expect(log.components(separatedBy: "Import com.example.same-universal").count - 1 == 2, "\(log)")
        for subject in ["Import com.example.one-universal", "Import com.example.two-universal", "Add member bob"] {
            #expect(log.contains(subject), "\(log)")
        }
        let forced = try CLI.runProgram("git", ["-C", bare, "reflog", "--all"])
        #expect(!forced.stdout.contains("forced-update"))

        // Offline, a change is committed here only, saying so; `team sync` pushes it once it can.
        #expect(try alice.run(["team", "sync"]).status == 0)
        try FileManager.default.moveItem(atPath: bare, toPath: bare + ".away")
        let three = try TestPKI.mint(in: fixtures, name: "three", bundle: "com.example.three", days: 300)
        try alice.run(["import", three]).succeeded(stderr: "here only: the remote could not be reached")
        try alice.run(["team", "sync"]).exited(2, stdout: "1 commit(s) wait here")
        try FileManager.default.moveItem(atPath: bare + ".away", toPath: bare)
        let pushed = try alice.run(["team", "sync"])
        #expect(pushed.stdout.contains("Pushed 1 commit(s)"), "\(pushed.stdout)\(pushed.stderr)")
        #expect(
            try CLI.runProgram("git", ["-C", bare, "log", "--all", "--format=%s"]).stdout.contains("com.example.three")
        )

        // A certificate swapped in the repository is refused as tampered.
        let json = try alice.run(["list", "--json"]).json()
        let entry = try #require(
            (json["credentials"] as? [[String: Any]])?.first {
                $0["credential"] as? String == "com.example.one-universal"
            }
        )
        let file = try #require(entry["certificate_file"] as? String ?? entry["file"] as? String, "\(entry)")
        let path = file.hasPrefix("/") ? file : alice.store + "/" + file
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: fixtures.path("two.pem"), toPath: path)
        let tampered = try alice.run(["check", "com.example.one-universal"])
        #expect(tampered.status != 0)
        #expect((tampered.stdout + tampered.stderr).contains("tampered"), "\(tampered.stdout)\(tampered.stderr)")
    }

    /// A member whose recipient is an ssh-ed25519 public key, as age accepts it: `team add` takes
    /// it, a plain clone with `--identity` and that ssh key reads the secrets without D-Bus, and
    /// the age tool decrypts them with the same key.
    @Test func anSSHKeyMemberReadsWithItsKeyFile() throws {
        let work = try TemporaryFolder()
        let fixtures = try TemporaryFolder()
        let (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        let cert = try TestPKI.mint(in: fixtures, name: "ssh", bundle: "com.example.ssh", days: 300)
        #expect(try alice.run(["import", cert]).status == 0)

        let key = work.path("carol_ed25519")
        try CLI.runProgram("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "carol", "-f", key]).succeeded()
        let recipient = try String(contentsOfFile: key + ".pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        try alice.run(["team", "add", "carol", recipient]).succeeded()

        let carolStore = work.path("carol")
        #expect(try CLI.runProgram("git", ["clone", "--quiet", bare, carolStore]).status == 0)
        let carol = Member(
            name: "carol",
            store: carolStore,
            environment: [:],
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]
        )
        try carol.run(["check", "com.example.ssh-universal", "--identity", key]).succeeded()
        let secrets = try FileManager.default.contentsOfDirectory(atPath: carolStore + "/secrets")
        #expect(!secrets.isEmpty)
        for file in secrets {
            try CLI.runProgram(
                "age",
                ["-d", "-i", key, "-o", "/dev/null", carolStore + "/secrets/" + file]
            ).succeeded(context: "\(file)")
        }
    }
}
