import Foundation
import TestSupport
import Testing

/// `team init` and `team join` killed at each file rename and each D-Bus message (strace's fault
/// injection, children included): the next `team init` or `team join` leaves a working store, and
/// no key of the interrupted run is left in the Secret Service.
@Suite(.serialized, .needsSecretService)
struct TeamSetupInterruptionTests {
    static let steps = ["rename", "sendmsg"]
    /// At most this many kills per step: enough to pass every step apnsctl itself takes.
    static let most = 40

    /// Runs apnsctl under strace, killed at the `call`th `syscall` of it or of a child. Returns
    /// false once a run goes through whole.
    static func interrupted(
        _ arguments: [String],
        at syscall: String,
        call: Int,
        environment: [String: String] = [:]
    )
        throws -> Bool
    {
        let result = try CLI.runProgram(
            "strace",
            [
                "-f", "-qq", "-o", "/dev/null", "-e", "trace=\(syscall)", "-e",
                "inject=\(syscall):signal=KILL:when=\(call)",
            ]
                + [CLI.binary] + arguments,
            environment: environment,
            timeout: 120
        )
        return result.status != 0
    }

    /// How many items of `kind` the Secret Service at `environment` holds for apnsctl.
    static func items(kind: String, environment: [String: String] = [:]) throws -> Int {
        let found = try CLI.runProgram(
            "secret-tool",
            ["search", "--all", "application", "apnsctl", "kind", kind],
            environment: environment
        )
        return (found.stdout + found.stderr).components(separatedBy: "attribute.kind = \(kind)").count - 1
    }

    @Test func anInterruptedInitIsFinishedOrUndoneByTheNext() throws {
        let work = try TemporaryFolder()
        // A Secret Service of its own: other suites' team stores run at the same time.
        let keyring = try MemberKeyring(work, name: "founder")
        let env = keyring.environment
        var made = 0
        for step in Self.steps {
            for call in 1...Self.most {
                let store = work.path("store-\(step)-\(call)")
                let bare = work.path("remote-\(step)-\(call).git")
                #expect(try CLI.runProgram("git", ["init", "--quiet", "--bare", bare]).status == 0)
                let bundle = try TestPKI.mint(
                    in: work,
                    name: "\(step)\(call)",
                    bundle: "com.example.i\(call)",
                    days: 300
                )
                #expect(try CLI.run(["import", bundle, "--store", store], environment: env).status == 0)
                let arguments = ["team", "init", bare, "--name", "alice", "--store", store]
                let cut = try Self.interrupted(arguments, at: step, call: call, environment: env)
                if cut {
                    try CLI.run(arguments, environment: env).succeeded(context: "\(step) #\(call)")
                }
                made += 1
                try CLI.run(
                    ["check", "com.example.i\(call)-universal", "--store", store],
                    environment: env
                ).succeeded(context: "\(step) #\(call)")
                let status = try CLI.run(["team", "status", "--store", store], environment: env)
                #expect(status.stdout.contains("a member"), "\(step) #\(call): \(status.stdout)\(status.stderr)")
                #expect(!FileManager.default.fileExists(atPath: store + "/.team-setup.json"))
                #expect(
                    try Self.items(kind: "team-identity", environment: env) == made,
                    "\(step) #\(call): a key left over"
                )
                #expect(try Self.items(kind: "signing-key", environment: env) == made)
                // The credential's secret left the Secret Service: the repository holds it now.
                #expect(try Self.items(kind: "private-key", environment: env) == 0, "\(step) #\(call)")
                let pushed = try CLI.runProgram("git", ["-C", bare, "log", "--format=%s"]).stdout
                #expect(pushed.contains("Start the team store"), "\(step) #\(call): \(pushed)")
                if !cut { break }
            }
        }
    }

    @Test func anInterruptedJoinIsCleanedUpByTheNext() throws {
        let work = try TemporaryFolder()
        let bare = try TeamStoreTests.bareRemote(in: work)
        try CLI.run(["team", "init", bare, "--name", "alice", "--store", work.path("alice")]).succeeded()
        let keyring = try MemberKeyring(work, name: "joiner")
        var joined = 0
        for step in Self.steps {
            for call in 1...Self.most {
                let store = work.path("bob-\(step)-\(call)")
                let arguments = ["team", "join", bare, "--name", "bob", "--store", store]
                let cut = try Self.interrupted(arguments, at: step, call: call, environment: keyring.environment)
                if cut {
                    try CLI.run(arguments, environment: keyring.environment)
                        .succeeded(context: "\(step) #\(call)")
                }
                joined += 1
                try CLI.run(["list", "--store", store], environment: keyring.environment)
                    .succeeded(context: "\(step) #\(call)")
                let identities = try Self.items(kind: "team-identity", environment: keyring.environment)
                #expect(identities == joined, "\(step) #\(call): \(identities) identities for \(joined) joins")
                #expect(try Self.items(kind: "signing-key", environment: keyring.environment) == joined)
                let hidden = try FileManager.default.contentsOfDirectory(atPath: work.path("")).filter {
                    $0.hasSuffix(".joining")
                }
                #expect(hidden.isEmpty, "\(hidden)")
                if !cut { break }
            }
        }
    }
}
