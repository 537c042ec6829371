import Foundation
import TestSupport
import Testing

/// `check` gives a team store's secrets the verdicts it gives a keyring store's: it decrypts and
/// verifies them, and a secret it cannot read is "could not check" or a problem, never ✓; git's
/// own words reach the person; a store made while its remote was away is cloned as CI clones it.
@Suite(.serialized, .needsSecretService)
struct TeamStoreParityTests {
    typealias Member = TeamStoreTests.Member
    static let key = "token-ABC123DEFG"

    @Test func aTeamStoreSecretIsCheckedAsAKeyringOneIs() throws {
        let work = try TemporaryFolder()
        let (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        try alice.run([
            "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
            "com.example.parity",
            "--environment", "both",
        ]).succeeded()
        #expect(try alice.run(["check", Self.key]).status == 0)

        // CI with no identity: could not check, naming where an identity comes from; metadata only: 0.
        let clone = work.path("ci")
        #expect(try CLI.runProgram("git", ["clone", "--quiet", bare, clone]).status == 0)
        let bare_ci = Member(
            name: "ci",
            store: clone,
            environment: [:],
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "APNSCTL_IDENTITY"]
        )
        let unknown = try bare_ci.run(["check", Self.key]).exited(2)
        #expect((unknown.stdout + unknown.stderr).contains("APNSCTL_IDENTITY"), "\(unknown.stdout)\(unknown.stderr)")
        #expect(!unknown.stdout.contains("✓"), "\(unknown.stdout)")
        #expect(try bare_ci.run(["check", Self.key, "--skip-secrets"]).status == 0)
        // CI with an identity that is not a member's: could not check.
        let stranger = try TeamStoreTests.newIdentity()
        var wrong = bare_ci
        wrong.environment = ["APNSCTL_IDENTITY": stranger.identity]
        let notRecipient = try wrong.run(["check", Self.key]).exited(2)
        #expect((notRecipient.stdout + notRecipient.stderr).contains("not among the recipients"))
        #expect(try wrong.run(["check", "--skip-secrets"]).status == 0)

        // The token key's age file replaced by random bytes: a problem (1), as a keyring's damaged key is.
        let file = try TeamTrustSupport.secretFile(of: Self.key, in: alice.store)
        try Data((0..<300).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: file))
        try alice.run(["check", Self.key]).exited(1, stdout: "age file", "tampered")
        let json = try alice.run(["check", Self.key, "--json"])
        #expect(json.stdout.contains("\"secret_tampered\""), "\(json.stdout)")
        #expect(try alice.run(["check", Self.key, "--skip-secrets"]).status == 0)

        // The keyring store: the same key with its secret gone is a problem (1) too.
        let keyring = try StoreCommandTests.Store()
        try keyring.importTokenKey(topic: "com.example.parity")
        _ = try StoreCommandTests.secretTool([
            "clear", "application", "apnsctl", "store", keyring.path, "alias", Self.key,
        ])
        try keyring.run(["check", Self.key]).exited(1, stdout: "missing", "Secret Service")
    }

    @Test func gitsOwnWordsReachThePerson() throws {
        let work = try TemporaryFolder()
        let (_, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        try alice.git(["remote", "set-url", "origin", "ssh://git@gitlocal.invalid/push-credentials.git"]).succeeded()
        let synced = try alice.run(["team", "sync"]).exited(2, stdout: "Could not resolve hostname")
        #expect(!synced.stdout.contains("(and the repository exists.)"), "\(synced.stdout)")
    }

    @Test func aStoreMadeWhileItsRemoteWasAwayIsClonedOnTheRemotesBranch() throws {
        let work = try TemporaryFolder()
        let bare = work.path("team.git")
        #expect(try CLI.runProgram("git", ["init", "--quiet", "--bare", "--initial-branch=master", bare]).status == 0)
        try FileManager.default.moveItem(atPath: bare, toPath: bare + ".away")
        let alice = Member(name: "alice", store: work.path("alice"), environment: [:])
        try alice.run(["team", "init", bare, "--name", "alice"]).succeeded(stderr: "here only")
        try FileManager.default.moveItem(atPath: bare + ".away", toPath: bare)
        let bundle = try TestPKI.mint(in: work, name: "away", bundle: "com.example.away", days: 300)
        #expect(try alice.run(["import", bundle]).status == 0)
        try alice.run(["team", "sync"]).succeeded()
        // CI's plain clone checks the store out without a warning, and reads it.
        let clone = work.path("ci")
        let cloned = try CLI.runProgram("git", ["clone", bare, clone])
        #expect(cloned.status == 0 && !cloned.stderr.contains("warning"), "\(cloned.stderr)")
        try CLI.run(["check", "--skip-secrets", "--store", clone]).succeeded()
        // A clone with nothing checked out gets the command that checks the branch out.
        let empty = work.path("empty.git")
        #expect(try CLI.runProgram("git", ["init", "--quiet", "--bare", "--initial-branch=trunk", empty]).status == 0)
        try CLI.runProgram("git", ["-C", alice.store, "push", "--quiet", empty, "HEAD:refs/heads/master"]).succeeded()
        let headless = work.path("headless")
        _ = try CLI.runProgram("git", ["clone", "--quiet", empty, headless])
        try CLI.run(["list", "--store", headless]).exited(2, stderr: "git -C \(headless) checkout master")
    }
}
