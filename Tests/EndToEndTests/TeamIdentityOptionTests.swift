import Foundation
import TestSupport
import Testing

/// `--identity FILE` on the commands that make a member's identity (`team init`, `team join`)
/// is refused before anything happens, not ignored: the identity they make goes to the Secret
/// Service, and a file given there would not be among the recipients afterwards (every read
/// with it would then fail as "not among the recipients").
@Suite(.serialized, .needsSecretService)
struct TeamIdentityOptionTests {
    typealias Member = TeamStoreTests.Member

    @Test func initAndJoinRefuseAnIdentityFileAndLeaveNothingBehind() throws {
        let work = try TemporaryFolder()
        let bare = try TeamStoreTests.bareRemote(in: work)
        let identityFile = work.path("ci.key")
        let keys = try TeamStoreTests.newIdentity()
        try (keys.identity + "\n").write(toFile: identityFile, atomically: true, encoding: .utf8)

        let alice = Member(name: "alice", store: work.path("alice"), environment: [:])
        try alice.run(["team", "init", bare, "--name", "alice", "--identity", identityFile])
            .exited(64, stderr: "takes no identity file", "`apnsctl team add --help`")
        // Nothing was made: the remote has no commit, the folder is no team store.
        #expect(try CLI.runProgram("git", ["-C", bare, "rev-parse", "--verify", "HEAD"]).status != 0)
        #expect(!FileManager.default.fileExists(atPath: work.path("alice/.git")))
        // The command the message names works as printed.
        try CLI.run(["team", "add", "--help"]).succeeded(stdout: "USAGE: apnsctl team add")

        // Without it, init works; then join with one is refused the same way.
        try alice.run(["team", "init", bare, "--name", "alice"]).succeeded()
        let bob = Member(name: "bob", store: work.path("bob"), environment: [:])
        try bob.run(["team", "join", bare, "--name", "bob", "--identity", identityFile])
            .exited(64, stderr: "`apnsctl team join` makes your own age identity")
        #expect(!FileManager.default.fileExists(atPath: work.path("bob/.git")))
    }

    /// `APNSCTL_IDENTITY` set to the name of an identity file (the slip `--identity FILE`
    /// invites) is told apart from a damaged identity, without printing the variable's value.
    @Test func anIdentityVariableThatNamesAFileSaysSo() throws {
        let work = try TemporaryFolder()
        let (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        let keys = try TeamStoreTests.newIdentity()
        #expect(try alice.run(["team", "add", "ci", keys.recipient]).status == 0)
        try alice.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
            "com.example.app", "--environment", "sandbox", "--alias", "key",
        ]).succeeded()
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
        try ci("").run(["export", "key", "--format", "pem", "--identity", identityFile])
            .succeeded(stdout: "BEGIN PRIVATE KEY")
    }
}
