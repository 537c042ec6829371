import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a pushed file can make a team store's commands read or pass on: links out of the store,
/// the identity in a child's environment, a URL taken for an option, a rewritten history; and
/// what modes and owners a store may have.
@Suite(.serialized, .needsSecretService)
struct TeamHygieneTests {
    typealias Member = TeamStoreTests.Member

    /// A team of alice alone with a certificate and a token key, a local gateway that trusts both,
    /// and a CI clone that reads with an identity in its environment.
    struct Team {
        let work: TemporaryFolder
        let bare: String
        let alice: Member
        let ci: Member
        let ciIdentity: String
        let gateway: GatewayProcess
        static let certificate = "com.example.links-universal"
        static let key = "token-ABC123DEFG"

        init(ciEnvironment: [String: String] = [:]) throws {
            work = try TemporaryFolder()
            (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
            let bundle = try TestPKI.mint(in: work, name: "links", bundle: "com.example.links", days: 300)
            #expect(try alice.run(["import", bundle]).status == 0)
            try alice.run([
                "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
                "com.example.links", "--environment", "both",
            ]).succeeded()
            let keys = try TeamStoreTests.newIdentity()
            ciIdentity = keys.identity
            #expect(try alice.run(["team", "add", "ci", keys.recipient]).status == 0)
            let clone = work.path("ci")
            #expect(try CLI.runProgram("git", ["clone", "--quiet", bare, clone]).status == 0)
            ci = Member(
                name: "ci",
                store: clone,
                environment: ["APNSCTL_IDENTITY": keys.identity].merging(ciEnvironment) { $1 },
                removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]
            )
            gateway = try GatewayProcess(
                work,
                name: "gateway",
                arguments: [
                    "--environment", "sandbox", "--client-ca", CLI.cert("ca/wwdr-test-ca.pem"), "--token-key",
                    "ABC123DEFG=\(CLI.cert("keys/AuthKey_ABC123DEFG.pub.pem"))", "--team-id", "ABCDE12345",
                ]
            )
        }
    }

    @Test func aSecretThatIsALinkIsRefusedAndNothingOfItsTargetIsShown() throws {
        let marker = "LINK-MARKER-\(UUID().uuidString)"
        let team = try Team(ciEnvironment: ["MARKER_VARIABLE": marker])
        let markerFile = team.work.path("outside-the-store")
        try "\(marker) a token of the host\n".write(toFile: markerFile, atomically: true, encoding: .utf8)
        let send = [
            "send", Team.certificate, "--token", GatewayCommandTests.token, "--alert", "links", "--environment",
            "sandbox",
        ]
        for target in [markerFile, "/proc/self/environ", "/dev/zero"] {
            for member in [team.ci, team.alice] {
                let file = try TeamTrustSupport.secretFile(of: Team.certificate, in: member.store)
                try FileManager.default.removeItem(atPath: file)
                try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: target)
                var runs: [(String, CLI.Result)] = []
                runs.append(("check", try member.run(["check", Team.certificate])))
                runs.append(("check --json", try member.run(["check", Team.certificate, "--json"])))
                runs.append(("export", try member.run(["export", Team.certificate, "--format", "pem"])))
                runs.append(("send", try member.run(send + team.gateway.connection)))
                runs.append(
                    (
                        "preflight",
                        try member.run(
                            ["preflight", Team.certificate, "--environment", "sandbox", "--json"]
                                + team.gateway.connection
                        )
                    )
                )
                if member.name == "alice" {
                    // Adding a member encrypts every secret again: it reads them all.
                    runs.append(
                        (
                            "team add",
                            try member.run(["team", "add", "eve", try TeamStoreTests.newIdentity().recipient])
                        )
                    )
                    runs.append(("team sync", try member.run(["team", "sync"])))
                }
                for (name, run) in runs {
                    let said = run.stdout + run.stderr
                    #expect(!said.contains(marker), "\(name) by \(member.name) through a link to \(target): \(said)")
                    #expect(!said.contains("PATH="), "\(name): the environment leaked")
                    if name != "team sync" {
                        #expect(run.status != 0, "\(name) by \(member.name) through a link to \(target) succeeded")
                        #expect(said.contains("not a regular file"), "\(name): \(said)")
                    }
                }
                // The exporter's probe reads the secret too.
                let exporter = try ExporterProcess(
                    team.work,
                    store: member.store,
                    arguments: team.gateway.connection,
                    environment: member.name == "ci" ? member.environment : [:]
                )
                let probe = try exporter.get("/probe?credential=\(Team.certificate)&environment=sandbox")
                #expect(probe.body.contains("probe_success 0"), "\(probe.body)")
                #expect(!probe.body.contains(marker) && !exporter.log.contains(marker), "\(probe.body)")
                _ = exporter.stop()
                #expect(try member.git(["checkout", "--", "secrets"]).status == 0)
                try? FileManager.default.removeItem(atPath: file)
                #expect(try member.git(["checkout", "--", "secrets"]).status == 0)
            }
        }
        #expect(try team.ci.run(["check", Team.certificate]).status == 0, "restored, it reads again")
    }

    @Test func childrenGetNoSecretAndURLsComeAfterDoubleDash() throws {
        let folder = try TemporaryFolder()
        let log = folder.path("git-calls.log")
        let wrappers = folder.path("bin")
        try FileManager.default.createDirectory(atPath: wrappers, withIntermediateDirectories: true)
        for tool in ["git", "age"] {
            let real = try CLI.runProgram("sh", ["-c", "command -v \(tool)"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let script = """
                #!/bin/sh
                { echo "== \(tool) $*"; env; } >> '\(log)'
                exec '\(real)' "$@"
                """
            try script.write(toFile: "\(wrappers)/\(tool)", atomically: true, encoding: .utf8)
            chmod("\(wrappers)/\(tool)", 0o755)
        }
        let path = "\(wrappers):\(ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")"
        let team = try Team(ciEnvironment: ["PATH": path])
        let alice = Member(name: "alice", store: team.alice.store, environment: ["PATH": path])
        // A bundle's password in a variable of apnsctl's environment: no child may see it.
        let p12 = CLI.cert("p12/openssl3-default.p12")
        try CLI.run(
            ["import", p12, "--password-env", "P12_PASS", "--store", alice.store],
            environment: ["PATH": path, "P12_PASS": StoreCommandTests.password]
        ).succeeded()
        let password = StoreCommandTests.password
        #expect(try alice.run(["team", "sync"]).status == 0)
        #expect(try alice.run(["team", "status"]).status == 0)
        #expect(try team.ci.run(["check", Team.certificate]).status == 0)
        #expect(try team.ci.run(["team", "status"]).status == 0)
        // A URL that git would take for an option.
        let hostile = folder.path("pwned")
        try CLI.run(
            ["team", "join", "--name", "zed", "--store", folder.path("zed"), "--", "--upload-pack=touch \(hostile)"],
            environment: ["PATH": path]
        ).exited(2)
        #expect(!FileManager.default.fileExists(atPath: hostile), "git ran the upload-pack given as a URL")
        let calls = try String(contentsOfFile: log, encoding: .utf8)
        #expect(calls.contains(" clone --quiet -- --upload-pack=touch"), "\(calls.suffix(2000))")
        #expect(calls.components(separatedBy: "== git").count > 10, "the wrapper saw the git calls")
        #expect(calls.contains("== age --decrypt"), "the wrapper saw age")
        for secret in ["AGE-SECRET-KEY-1", "APNSCTL_IDENTITY", "P12_PASS=", password, team.ciIdentity] {
            #expect(!calls.contains(secret), "\(secret.prefix(20)) reached a child")
        }
    }

    @Test func aRewrittenRemoteIsReportedAndNothingIsPushedOverIt() throws {
        let team = try Team()
        let rewriter = try Pusher(team.work, name: "rewriter", remote: team.bare, environment: [:])
        #expect(try rewriter.git(["reset", "--quiet", "--hard", "HEAD~1"]).status == 0)
        try "rewritten\n".write(toFile: rewriter.clone + "/NOTES", atomically: true, encoding: .utf8)
        #expect(try rewriter.git(["add", "NOTES"]).status == 0)
        #expect(try rewriter.git(["commit", "--quiet", "-m", "rewrite"]).status == 0)
        #expect(try rewriter.git(["push", "--quiet", "--force", "origin", "HEAD"]).status == 0)
        let forced = try rewriter.git(["rev-parse", "HEAD"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let bundle = try TestPKI.mint(in: team.work, name: "later", bundle: "com.example.later", days: 300)
        #expect(try team.alice.run(["import", bundle]).status == 0)
        let synced = try team.alice.run(["team", "sync"]).exited(1)
        #expect(synced.stderr.contains("history was rewritten") && synced.stderr.contains(String(forced.prefix(12))))
        let head = try CLI.runProgram("git", ["-C", team.bare, "rev-parse", "HEAD"]).stdout
        #expect(head.trimmingCharacters(in: .whitespacesAndNewlines) == forced, "something was pushed over it")
        try team.alice.run(["team", "sync", "--accept-rewrite"]).succeeded()
        let log = try CLI.runProgram("git", ["-C", team.bare, "log", "--format=%s"]).stdout
        #expect(log.contains("Import com.example.later-universal") && log.contains("rewrite"), "\(log)")
    }

    @Test func storeFoldersAreTheirOwnersAloneWhateverTheUmask() throws {
        let work = try TemporaryFolder()
        let bare = try TeamStoreTests.bareRemote(in: work)
        let stores = [work.path("alice"), work.path("bob")]
        let keyring = try MemberKeyring(work, name: "bob")
        let commands = [
            "umask 000; exec '\(CLI.binary)' team init '\(bare)' --name alice --store '\(stores[0])'",
            "umask 000; exec '\(CLI.binary)' team join '\(bare)' --name bob --store '\(stores[1])'",
        ]
        for (command, environment) in zip(commands, [[:], keyring.environment]) {
            try CLI.runProgram("sh", ["-c", command], environment: environment).succeeded()
        }
        let bundle = try TestPKI.mint(in: work, name: "umask", bundle: "com.example.umask", days: 300)
        try CLI.runProgram(
            "sh",
            ["-c", "umask 000; exec '\(CLI.binary)' import '\(bundle)' --store '\(stores[0])'"]
        ).succeeded()
        for store in stores {
            let wide = try CLI.runProgram("find", [store, "-perm", "/077", "-not", "-type", "l"]).stdout
            #expect(wide.isEmpty, "wider than its owner: \(wide)")
        }
        // Others may write to it: refused, with the chmod to run; then fine.
        chmod(stores[0], 0o777)
        try CLI.run(["list", "--store", stores[0]]).exited(2, stderr: "chmod 700 \(stores[0])")
        #expect(try CLI.runProgram("chmod", ["700", stores[0]]).status == 0)
        #expect(try CLI.run(["list", "--store", stores[0]]).status == 0)
        // Another user's folder: refused, with the chown.
        chown(stores[1], 65534, 65534)
        try CLI.run(["list", "--store", stores[1]], environment: keyring.environment).exited(2, stderr: "chown -R")
        chown(stores[1], getuid(), getgid())
    }
}
