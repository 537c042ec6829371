import Foundation
import TestSupport
import Testing

/// `--identity FILE` on the commands that make a member's identity (`team init`, `team join`)
/// is refused before anything happens, not ignored: the identity they make goes to the Secret
/// Service, and a file given there would not be among the recipients afterwards (every read
/// with it would then fail as "not among the recipients").
@Suite(
    .serialized,
    .enabled(
        if: insideSecretService,
        "needs the private Secret Service that scripts/test starts (scripts/with-secret-service swift test)"
    )
)
struct TeamIdentityOptionTests {
    typealias Member = TeamStoreTests.Member

    @Test func initAndJoinRefuseAnIdentityFileAndLeaveNothingBehind() throws {
        let work = try TemporaryFolder()
        let bare = work.path("team.git")
        #expect(try CLI.runProgram("git", ["init", "--quiet", "--bare", bare]).status == 0)
        let identityFile = work.path("ci.key")
        let keys = try TeamStoreTests.newIdentity()
        try (keys.identity + "\n").write(toFile: identityFile, atomically: true, encoding: .utf8)

        let alice = Member(name: "alice", store: work.path("alice"), environment: [:])
        let refused = try alice.run(["team", "init", bare, "--name", "alice", "--identity", identityFile])
        #expect(refused.status == 64, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("takes no identity file"), "\(refused.stderr)")
        #expect(refused.stderr.contains("`apnsctl team add --help`"), "\(refused.stderr)")
        // Nothing was made: the remote has no commit, the folder is no team store.
        #expect(try CLI.runProgram("git", ["-C", bare, "rev-parse", "--verify", "HEAD"]).status != 0)
        #expect(!FileManager.default.fileExists(atPath: work.path("alice/.git")))
        // The command the message names works as printed.
        let help = try CLI.run(["team", "add", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: apnsctl team add"), "\(help.stdout)")

        // Without it, init works; then join with one is refused the same way.
        let started = try alice.run(["team", "init", bare, "--name", "alice"])
        #expect(started.status == 0, "\(started.stdout)\(started.stderr)")
        let bob = Member(name: "bob", store: work.path("bob"), environment: [:])
        let joined = try bob.run(["team", "join", bare, "--name", "bob", "--identity", identityFile])
        #expect(joined.status == 64, "\(joined.stdout)\(joined.stderr)")
        #expect(joined.stderr.contains("`apnsctl team join` makes your own age identity"), "\(joined.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.path("bob/.git")))
    }

    /// `APNSCTL_IDENTITY` set to the name of an identity file (the slip `--identity FILE`
    /// invites) is told apart from a damaged identity, without printing the variable's value.
    @Test func anIdentityVariableThatNamesAFileSaysSo() throws {
        let work = try TemporaryFolder()
        let bare = work.path("team.git")
        #expect(try CLI.runProgram("git", ["init", "--quiet", "--bare", bare]).status == 0)
        let alice = Member(name: "alice", store: work.path("alice"), environment: [:])
        #expect(try alice.run(["team", "init", bare, "--name", "alice"]).status == 0)
        let keys = try TeamStoreTests.newIdentity()
        #expect(try alice.run(["team", "add", "ci", keys.recipient]).status == 0)
        let imported = try alice.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
            "com.example.app", "--environment", "sandbox", "--alias", "key",
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        let identityFile = work.path("ci identity.key")
        try (keys.identity + "\n").write(toFile: identityFile, atomically: true, encoding: .utf8)
        let clone = work.path("ci")
        #expect(try CLI.runProgram("git", ["clone", "--quiet", bare, clone]).status == 0)
        func ci(_ identity: String) -> Member {
            Member(
                name: "ci",
                store: clone,
                environment: ["APNSCTL_IDENTITY": identity],
                removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]
            )
        }
        let named = try ci(identityFile).run(["export", "key", "--format", "pem"])
        #expect(named.status != 0)
        #expect(named.stderr.contains("APNSCTL_IDENTITY holds the name of a file"), "\(named.stderr)")
        #expect(!named.stderr.contains(identityFile) && !named.stdout.contains(identityFile))
        // A value that is no identity and names no file keeps the general message.
        let garbled = try ci("not-an-identity").run(["export", "key", "--format", "pem"])
        #expect(garbled.stderr.contains("is not an age identity"), "\(garbled.stderr)")
        // The file given as the hint says works.
        let given = try ci("").run(["export", "key", "--format", "pem", "--identity", identityFile])
        #expect(given.status == 0 && given.stdout.contains("BEGIN PRIVATE KEY"), "\(given.stderr)")
    }
}
