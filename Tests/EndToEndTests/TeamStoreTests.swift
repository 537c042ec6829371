import Foundation
import TestSupport
import Testing

/// A team of two engineers, each with their own Secret Service, and a CI job with a plain clone
/// and an identity in its environment, sharing push credentials through a git repository
/// (over ssh on loopback, and by path) with the real git, age and sshd.
@Suite(.serialized, .needsSecretService)
struct TeamStoreTests {
    /// One member's view: a store folder and the environment its commands run in.
    struct Member {
        var name: String
        var store: String
        var environment: [String: String]
        var removeEnvironment: [String] = []

        @discardableResult
        func run(_ arguments: [String], stdin: String? = nil) throws -> CLI.Result {
            try CLI.run(
                arguments + ["--store", store],
                stdin: stdin,
                environment: environment,
                removeEnvironment: removeEnvironment,
                timeout: 120
            )
        }

        func git(_ arguments: [String]) throws -> CLI.Result {
            try CLI.runProgram("git", ["-C", store] + arguments, environment: environment)
        }
    }

    /// A new bare repository `name` under `work`, for a team's remote.
    static func bareRemote(in work: TemporaryFolder, named name: String = "team.git") throws -> String {
        let bare = work.path(name)
        try CLI.runProgram("git", ["init", "--quiet", "--bare", bare]).succeeded()
        return bare
    }

    /// A bare `team.git` under `work`, and alice, in the suite's Secret Service, who started the
    /// team on it.
    static func aliceStartsATeam(in work: TemporaryFolder) throws -> (bare: String, alice: Member) {
        let bare = try bareRemote(in: work)
        let alice = Member(name: "alice", store: work.path("alice"), environment: [:])
        try alice.run(["team", "init", bare, "--name", "alice"]).succeeded()
        return (bare, alice)
    }

    static func age(_ arguments: [String], stdin: String? = nil) throws -> CLI.Result {
        try CLI.runProgram("age", arguments, stdin: stdin)
    }

    /// A new age identity, held by the test in memory only (CI keeps it in its secret variables).
    static func newIdentity() throws -> (identity: String, recipient: String) {
        let made = try CLI.runProgram("age-keygen", [])
        let identity = try #require(made.stdout.split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") })
        let recipient = try CLI.runProgram("age-keygen", ["-y"], stdin: String(identity) + "\n")
        return (String(identity), recipient.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The command `team join` printed, run as printed by a member who is in.
    static func addCommand(in output: String) throws -> [String] {
        let line = try #require(output.split(separator: "\n").first { $0.contains("apnsctl team add") }, "\(output)")
        return Array(line.split(separator: " ").map(String.init).drop { $0 != "apnsctl" }.dropFirst())
    }

    static func sha256(of list: CLI.Result, alias: String) throws -> String? {
        let json = try list.json()
        let credentials = json["credentials"] as? [[String: Any]] ?? []
        return credentials.first { $0["credential"] as? String == alias }?["sha256"] as? String
    }

    static func fingerprint(ofCertificateIn bundle: String) throws -> String {
        let result = try CLI.runProgram("openssl", ["x509", "-in", bundle, "-noout", "-fingerprint", "-sha256"])
        return String(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "=").last ?? "")
    }

    /// The PKCS#8 DER inside a PEM file's PRIVATE KEY block.
    static func pkcs8(in path: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let start = try #require(text.range(of: "-----BEGIN PRIVATE KEY-----"))
        let end = try #require(text.range(of: "-----END PRIVATE KEY-----"))
        let body = text[start.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return [UInt8](try #require(Data(base64Encoded: String(body))))
    }

    /// Every object of a repository, as `git cat-file` gives them.
    static func allObjects(_ repository: String) throws -> Data {
        let result = try CLI.runProgram(
            "sh",
            ["-c", "git -C \(repository) cat-file --batch-all-objects --batch | base64 -w0"]
        )
        return try #require(Data(base64Encoded: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Every regular file under `folder` but the members' Secret Service folders.
    static func filesOutsideTheKeyrings(under folder: String) throws -> [(String, Data)] {
        var files: [(String, Data)] = []
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasPrefix("keyring-") { continue }
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + relative)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            files.append((relative, try Data(contentsOf: URL(fileURLWithPath: folder + "/" + relative))))
        }
        return files
    }

    @Test func twoEngineersAndCIShareRotateAndRemoveOverSSH() async throws {
        let work = try TemporaryFolder()
        let fixtures = try TemporaryFolder()
        let ssh = try LoopbackSSH(work)
        let bare = try TeamStoreTests.bareRemote(in: work, named: "push-credentials.git")
        let remote = ssh.url(bare)
        let gitSSH = ["GIT_SSH_COMMAND": ssh.gitSSHCommand]
        let keyringA = try MemberKeyring(work, name: "alice")
        let keyringB = try MemberKeyring(work, name: "bob")
        let alice = Member(
            name: "alice",
            store: work.path("alice"),
            environment: keyringA.environment.merging(gitSSH) { $1 }
        )
        let bob = Member(name: "bob", store: work.path("bob"), environment: keyringB.environment.merging(gitSSH) { $1 })

        // A starts the team and imports a certificate, a password-protected bundle and a .p8.
        try alice.run(["team", "init", remote, "--name", "alice"]).succeeded(stderr: "committed and pushed")
        let first = try TestPKI.mint(in: fixtures, name: "first", bundle: "com.example.team", days: 300)
        try alice.run(["import", first]).succeeded(
            stderr: "committed and pushed \"Import com.example.team-universal"
        )
        let p12 = CLI.cert("p12/openssl3-default.p12")
        #expect(try alice.run(["import", p12, "--password-stdin"], stdin: StoreCommandTests.password).status == 0)
        let p8 = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let key = [
            "import", p8, "--team-id", "ABCDE12345", "--topic", "com.example.team", "--environment", "both",
        ]
        #expect(try alice.run(key).status == 0)

        // B joins: metadata only until a member adds B.
        let joined = try bob.run(["team", "join", remote, "--name", "bob"]).succeeded()
        #expect(try bob.run(["list"]).stdout.contains("com.example.team-universal"))
        try bob.run(["check", "--skip-secrets", "com.example.team-universal", "token-ABC123DEFG"]).succeeded()
        let locked = try bob.run(["check", "com.example.team-universal"]).exited(2)
        #expect((locked.stdout + locked.stderr).contains("not among the recipients"), "\(locked.stdout)")
        try alice.run(try Self.addCommand(in: joined.stdout)).succeeded()
        #expect(try bob.run(["team", "sync"]).status == 0)

        // B sends through the local gateway with A's credential.
        let gateway = try GatewayProcess(
            work,
            name: "gateway",
            arguments: ["--environment", "sandbox", "--client-ca", CLI.cert("ca/wwdr-test-ca.pem")]
        )
        let send = [
            "send", "com.example.team-universal", "--token", GatewayCommandTests.token, "--alert", "team",
            "--environment", "sandbox",
        ]
        try bob.run(send + gateway.connection).succeeded()

        // CI: a plain clone, an identity in its environment, no D-Bus.
        let ciIdentity = try Self.newIdentity()
        #expect(try alice.run(["team", "add", "ci", ciIdentity.recipient]).status == 0)
        let ciStore = work.path("ci")
        #expect(try CLI.runProgram("git", ["clone", "--quiet", remote, ciStore], environment: gitSSH).status == 0)
        let ci = Member(
            name: "ci",
            store: ciStore,
            environment: gitSSH.merging(["APNSCTL_IDENTITY": ciIdentity.identity]) { $1 },
            removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]
        )
        #expect(try ci.run(send + gateway.connection).status == 0)

        // A rotates; B's sync and CI's pull bring the new certificate under the same alias.
        let second = try TestPKI.mint(in: fixtures, name: "second", bundle: "com.example.team", days: 400)
        try alice.run(["import", second, "--replace", "com.example.team-universal"])
            .succeeded(stderr: "Rotate com.example.team-universal")
        #expect(try bob.run(["team", "sync"]).status == 0)
        #expect(try ci.git(["pull", "--quiet"]).status == 0)
        let newSHA = try Self.fingerprint(ofCertificateIn: second)
        for member in [bob, ci] {
            #expect(try Self.sha256(of: member.run(["list", "--json"]), alias: "com.example.team-universal") == newSHA)
            try member.run(send + gateway.connection).succeeded(context: "\(member.name)")
        }
        try ci.run(["check", "com.example.team-universal", "--environment", "sandbox"]).succeeded()
        try ci.run(
            ["preflight", "com.example.team-universal", "--environment", "sandbox"] + gateway.connection
        ).succeeded()

        // Interop: the age CLI reads the .p8's secret with CI's identity, and apnsctl reads what age -r made.
        let secretFile = try #require(
            try FileManager.default.contentsOfDirectory(atPath: ciStore + "/secrets").first { $0.contains("token-key") }
        )
        let decrypted = try CLI.runProgram(
            "sh",
            ["-c", "age -d -i /dev/stdin \(ciStore)/secrets/\(secretFile) | base64 -w0"],
            stdin: ciIdentity.identity + "\n"
        )
        let p8DER = try Self.pkcs8(in: p8)
        #expect(Data(base64Encoded: decrypted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == Data(p8DER))
        // The certificate's key, encrypted by age -r alone, is read by apnsctl.
        let keyFile = try #require(
            try FileManager.default.contentsOfDirectory(atPath: ciStore + "/secrets").first {
                $0.hasPrefix("com.example.team-universal.private-key")
            }
        )
        let encrypt = "base64 -d | age -r \(ciIdentity.recipient) -o \(ciStore)/secrets/\(keyFile)"
        try CLI.runProgram(
            "sh",
            ["-c", encrypt],
            stdin: Data(try Self.pkcs8(in: second)).base64EncodedString()
        ).succeeded()
        try ci.run(["check", "com.example.team-universal", "--environment", "sandbox"]).succeeded()
        // The rotated-out key in its place, encrypted the same way, is refused as tampered.
        try CLI.runProgram(
            "sh",
            ["-c", encrypt],
            stdin: Data(try Self.pkcs8(in: first)).base64EncodedString()
        ).succeeded()
        let swapped = try ci.run(["check", "com.example.team-universal", "--environment", "sandbox"])
        #expect(swapped.status != 0)
        #expect((swapped.stdout + swapped.stderr).contains("tampered"), "\(swapped.stdout)\(swapped.stderr)")
        #expect(try ci.git(["checkout", "--", "secrets"]).status == 0)

        // A removes B: at the new head B's identity decrypts nothing, through apnsctl or age.
        let removed = try alice.run(["team", "remove", "bob"])
            .succeeded(stdout: "--replace com.example.team-universal", "revoke key ABC123DEFG")
        // The token key's rotation command says what the new key will serve.
        #expect(
            removed.stdout.contains(
                "--team-id ABCDE12345 --topic com.example.team --environment both --replace token-ABC123DEFG"
            ),
            "\(removed.stdout)"
        )
        #expect(try bob.run(["team", "sync"]).status == 0)
        let teamFile = try String(contentsOfFile: bob.store + "/team.json", encoding: .utf8)
        #expect(!teamFile.contains("\"bob\""))
        try bob.run(["check", "com.example.team-universal"]).exited(2)
        // B is told he was removed, by whom, not that he is "not a member yet".
        let status = try bob.run(["team", "status"])
        #expect(status.stdout.contains("removed from the team ("), "\(status.stdout)")
        #expect(status.stdout.contains("Remove bob") || status.stdout.contains("bob"), "\(status.stdout)")
        #expect(!status.stdout.contains("not a member yet"), "\(status.stdout)")
        let teamID = try #require(
            (try JSONSerialization.jsonObject(with: Data(teamFile.utf8)) as? [String: Any])?["team_id"] as? String
        )
        let bobIdentity = try CLI.runProgram(
            "sh",
            // The plain line age reads (docs/team.md, "Recovering your keys by hand").
            [
                "-c",
                "secret-tool lookup application apnsctl store team:\(teamID) alias identity-bob kind team-identity",
            ],
            environment: keyringB.environment
        )
        #expect(bobIdentity.stdout.hasPrefix("AGE-SECRET-KEY-1"), "\(bobIdentity.stderr)")
        let secrets = try FileManager.default.contentsOfDirectory(atPath: bob.store + "/secrets")
        #expect(secrets.count == 3)
        for file in secrets {
            let attempt = try CLI.runProgram(
                "age",
                ["-d", "-i", "/dev/stdin", bob.store + "/secrets/" + file],
                stdin: bobIdentity.stdout + "\n"
            )
            #expect(attempt.status != 0, "bob still decrypts \(file)")
            #expect(attempt.stderr.contains("no identity matched"), "\(attempt.stderr)")
        }
        #expect(try ci.git(["pull", "--quiet"]).status == 0)
        #expect(try ci.run(["check", "com.example.team-universal", "--environment", "sandbox"]).status == 0)

        // No secret in any object of the repository, nor in any file outside the Secret Service.
        var forms = try OnboardingTests.leakForms(ofKey: Self.pkcs8(in: first))
        forms += try OnboardingTests.leakForms(ofKey: Self.pkcs8(in: second))
        forms += [Data(p8DER.suffix(40)), Data(Data(p8DER).base64EncodedString().utf8)]
        forms += [Data(StoreCommandTests.password.utf8), Data("AGE-SECRET-KEY-1".utf8)]
        let objects = try Self.allObjects(bare)
        #expect(objects.count > 1000)
        for form in forms { #expect(objects.range(of: form) == nil, "a secret in the repository's objects") }
        for (name, bytes) in try Self.filesOutsideTheKeyrings(under: work.url.path) {
            for form in forms { #expect(bytes.range(of: form) == nil, "a secret in \(name)") }
        }
    }
}
