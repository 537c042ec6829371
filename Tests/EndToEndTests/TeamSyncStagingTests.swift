import Foundation
import TestSupport
import Testing

/// What a team store's commits may hold: only the files apnsctl wrote. A key exported or copied
/// into the folder, a stray file, links (as new names and in place of index.json and team.json)
/// and a swapped bundle stop every commit, named, with a hint that works when pasted; nothing of
/// them reaches the remote (over ssh on loopback). An export into a store is refused, and a
/// plain clone with no git identity fails loudly and commits once it has one.
@Suite(.serialized, .needsSecretService)
struct TeamSyncStagingTests {
    typealias Member = TeamStoreTests.Member

    /// The hint's step after `label` (up to "; then"), as printed.
    static func step(_ label: String, in text: String) throws -> String {
        let start = try #require(text.range(of: label), "no \"\(label)\" in \(text)").upperBound
        let rest = text[start...]
        let end = rest.range(of: "; then")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    /// Runs a hint's command through a shell, with `home` as the home folder.
    static func paste(_ command: String, home: String) throws -> CLI.Result {
        for part in command.components(separatedBy: " && ") { try HintsRunAsPrintedTests.expectSafeToPaste(part) }
        return try CLI.runProgram("/bin/sh", ["-c", command], environment: ["HOME": home])
    }

    static func remoteHead(_ bare: String) throws -> String {
        try CLI.runProgram("git", ["-C", bare, "rev-parse", "--verify", "--quiet", "HEAD"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aSyncCommitsOnlyWhatApnsctlWroteOverSSH() throws {
        let work = try TemporaryFolder()
        let ssh = try LoopbackSSH(work)
        let bare = try TeamStoreTests.bareRemote(in: work, named: "push-credentials.git")
        let alice = Member(
            name: "alice",
            store: work.path("alice"),
            environment: ["GIT_SSH_COMMAND": ssh.gitSSHCommand]
        )
        let home = work.path("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        #expect(try alice.run(["team", "init", ssh.url(bare), "--name", "alice"]).status == 0)
        let p12 = CLI.cert("p12/openssl3-default.p12")
        try alice.run(["import", p12, "--password-stdin"], stdin: StoreCommandTests.password).succeeded()
        let key = ["import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345"]
        #expect(try alice.run(key + ["--topic", "com.example.team", "--environment", "both"]).status == 0)
        let pushed = try Self.remoteHead(bare)

        // An export into the store is refused; one made outside and copied in is a stray.
        let inside = alice.store + "/key.pem"
        try alice.run(["export", "token-ABC123DEFG", "--format", "pem", "--out", inside])
            .exited(2, stderr: "inside the credential store folder")
        #expect(!FileManager.default.fileExists(atPath: inside))
        let outside = work.path("key.pem")
        #expect(try alice.run(["export", "token-ABC123DEFG", "--format", "pem", "--out", outside]).status == 0)
        try FileManager.default.copyItem(atPath: outside, toPath: inside)
        let marker = "STRAY-\(UUID().uuidString)"
        try "\(marker)\n".write(toFile: alice.store + "/NOTES.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: alice.store + "/hosts-link",
            withDestinationPath: "/etc/hosts"
        )
        try FileManager.default.createSymbolicLink(
            atPath: alice.store + "/credentials/outside.pem",
            withDestinationPath: outside
        )
        let stopped = try alice.run(["team", "sync"])
        #expect(stopped.status != 0, "\(stopped.stdout)\(stopped.stderr)")
        for name in [
            "key.pem (a file apnsctl did not write)", "NOTES.txt", "hosts-link (a link",
            "credentials/outside.pem (a link",
        ] {
            #expect(stopped.stderr.contains(name), "\(name) not named: \(stopped.stderr)")
        }
        #expect(try Self.remoteHead(bare) == pushed, "something was pushed")
        // A member change does not start: nothing encrypted again, no list signed.
        let adding = try alice.run(["team", "add", "eve", try TeamStoreTests.newIdentity().recipient])
        #expect(adding.status != 0, "\(adding.stdout)\(adding.stderr)")
        #expect(adding.stderr.contains("NOTES.txt"), "\(adding.stderr)")
        let touched = try alice.git(["status", "--porcelain", "--", "secrets", "team.json", "team.json.sig"])
        #expect(touched.stdout.isEmpty, "\(touched.stdout)")
        // The hint, pasted, moves them out; the sync then goes through.
        let move = try Self.step("Move out what is not the store's: ", in: stopped.stderr)
        #expect(try Self.paste(move, home: home).status == 0, "\(move)")
        #expect(FileManager.default.fileExists(atPath: home + "/apnsctl-moved-out/key.pem"))
        #expect(!FileManager.default.fileExists(atPath: inside))
        try alice.run(["team", "sync"]).succeeded()

        // A change made while a stray is in the folder: the change's commit stops, and the command
        // fails saying so; once the stray is out, the sync commits and pushes the change.
        try "\(marker)\n".write(toFile: alice.store + "/stray.txt", atomically: true, encoding: .utf8)
        let later = try TestPKI.mint(in: work, name: "later", bundle: "com.example.later", days: 300)
        let imported = try alice.run(["import", later]).exited(2, stderr: "stray.txt", "apnsctl team sync")
        try Self.paste(try Self.step("Move out what is not the store's: ", in: imported.stderr), home: home).succeeded()
        try alice.run(["team", "sync"]).succeeded(stdout: "Pushed")

        // Links in place of index.json and team.json, and a swapped bundle: each restored as printed.
        let listed = try alice.run(["list", "--json"]).json()
        let bundle = try #require(
            (listed["credentials"] as? [[String: Any]])?.compactMap { $0["bundle_file"] as? String }.first,
            "\(listed)"
        )
        let relativeBundle = bundle.hasPrefix("/") ? String(bundle.dropFirst(alice.store.count + 1)) : bundle
        for name in ["index.json", "team.json", relativeBundle] {
            let path = alice.store + "/" + name
            let copy = work.path("copy-\(UUID().uuidString)")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.removeItem(atPath: path)
            if name == relativeBundle {
                try FileManager.default.copyItem(atPath: CLI.cert("p12/voip.p12"), toPath: path)
            } else {
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: copy)
            }
            let swapped = try alice.run(["team", "sync"])
            #expect(swapped.status != 0, "\(name): \(swapped.stdout)\(swapped.stderr)")
            #expect(swapped.stderr.contains("\(name) ("), "\(name) not named: \(swapped.stderr)")
            #expect(try Self.remoteHead(bare) != "" && !swapped.stdout.contains("Pushed"))
            let restore = try Self.step("Restore what was replaced from the last commit: ", in: swapped.stderr)
            try Self.paste(restore, home: home).succeeded(context: "\(restore)")
            try alice.run(["team", "sync"]).succeeded(context: "\(name) restored")
        }
        try alice.run(["check", "token-ABC123DEFG"]).succeeded()

        // Nothing of them in any commit on the remote: names, contents, links.
        let history = try CLI.runProgram("git", ["-C", bare, "log", "--all", "-p", "--raw", "--format=%H %s"]).stdout
        for leaked in ["BEGIN PRIVATE KEY", marker, "key.pem", "NOTES.txt", "hosts-link", "outside.pem", "stray.txt"] {
            #expect(!history.contains(leaked), "\(leaked) is in a commit on the remote")
        }
        #expect(!history.contains(" 120000 "), "a link is in a commit on the remote")
        let names = try CLI.runProgram("git", ["-C", bare, "log", "--all", "--name-only", "--format="]).stdout
            .split(separator: "\n").map(String.init)
        for name in Set(names) {
            let own =
                ["index.json", "team.json", "team.json.sig", ".gitignore"].contains(name)
                || (name.hasPrefix("credentials/") && (name.hasSuffix(".cert.pem") || name.hasSuffix(".p12")))
                || (name.hasPrefix("secrets/") && name.hasSuffix(".age"))
            #expect(own, "\(name) is in a commit on the remote")
        }
        let grep = try CLI.runProgram("git", ["-C", bare, "grep", "-l", "BEGIN PRIVATE KEY", "HEAD"])
        #expect(grep.stdout.isEmpty)
    }

    /// A plain store with a stray file becomes a team store only once the stray is out.
    @Test func initMakesNothingWhileTheFolderHoldsAStray() throws {
        let store = try StoreCommandTests.Store()
        try store.importTokenKey()
        let bare = store.folder.path("team.git")
        #expect(try CLI.runProgram("git", ["init", "--quiet", "--bare", bare]).status == 0)
        try "notes\n".write(toFile: store.path + "/NOTES.txt", atomically: true, encoding: .utf8)
        let refused = try store.run(["team", "init", bare, "--name", "alice"])
        #expect(refused.status != 0, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("NOTES.txt (a file apnsctl did not write)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was made"), "\(refused.stderr)")
        for made in [".git", "team.json", "secrets", ".team-setup.json"] {
            #expect(!FileManager.default.fileExists(atPath: store.path + "/" + made), "\(made) was made")
        }
        let home = store.folder.path("home")
        let move = try Self.step("Move out what is not the store's: ", in: refused.stderr)
        #expect(try Self.paste(move, home: home).status == 0, "\(move)")
        try store.run(["team", "init", bare, "--name", "alice"]).succeeded()
        let names = try CLI.runProgram("git", ["-C", bare, "log", "--all", "--name-only", "--format="]).stdout
        #expect(!names.contains("NOTES.txt"), "\(names)")
    }

    @Test func anExportIntoAKeyringStoreIsRefused() throws {
        let store = try StoreCommandTests.Store()
        try store.importTokenKey()
        for out in [store.path + "/key.pem", store.path + "/credentials/key.pem", store.path + "/new/deeper/key.pem"] {
            let refused = try store.run(["export", "token-ABC123DEFG", "--format", "pem", "--out", out])
                .exited(2, context: "\(out)")
            #expect(refused.stderr.contains("inside the credential store folder"), "\(refused.stderr)")
            #expect(refused.stderr.contains("Nothing was written"))
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        // Another store found by walking up, through a link to it.
        let other = try StoreCommandTests.Store()
        try other.importTokenKey()
        let link = store.folder.path("to-other")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: other.path)
        try store.run(["export", "token-ABC123DEFG", "--format", "pem", "--out", link + "/key.pem"])
            .exited(2, stderr: "inside the credential store folder")
        let beside = store.folder.path("key.pem")
        #expect(try store.run(["export", "token-ABC123DEFG", "--format", "pem", "--out", beside]).status == 0)
    }

    /// docs/store.md: a new key is rolled out beside the old one, then `--replace` retires the old.
    @Test func aRotationToAKeyAlreadyStoredTakesTheOldAlias() throws {
        let store = try StoreCommandTests.Store()
        try store.importTokenKey(topic: "com.example.app", environment: "production")
        let newKey = store.folder.path("AuthKey_NEWKEY1234.p8")
        try TestPKI.tokenKey(at: newKey)
        try store.run([
            "import", newKey, "--team-id", "ABCDE12345", "--topic", "com.example.other", "--environment", "sandbox",
        ]).succeeded()
        try store.run(["import", newKey, "--team-id", "ABCDE12345"]).exited(1, stderr: "--replace <OLD-ALIAS>")
        try store.run(["import", newKey, "--team-id", "ABCDE12345", "--replace", "token-ABC123DEFG"])
            .succeeded(stdout: "token-NEWKEY1234 held the same key")
        let credentials = try store.listJSON()
        #expect(credentials.count == 1, "\(credentials)")
        let entry = try #require(credentials.first)
        #expect(entry["credential"] as? String == "token-ABC123DEFG")
        #expect(entry["key_id"] as? String == "NEWKEY1234")
        let topics = (entry["topics"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(topics) == ["com.example.app", "com.example.other"], "\(entry)")
        #expect(Set(entry["environments"] as? [String] ?? []) == ["sandbox", "production"], "\(entry)")
        try store.run(["check", "token-ABC123DEFG", "--topic", "com.example.other"]).succeeded()
        // The folded alias's secret is gone; the new one reads.
        let secrets = try CLI.runProgram(
            "secret-tool",
            ["search", "--all", "application", "apnsctl", "alias", "token-NEWKEY1234"]
        )
        #expect(!secrets.stdout.contains("token-NEWKEY1234") && !secrets.stderr.contains("token-NEWKEY1234"))
    }

    /// A plain clone (CI that writes) on a machine where git knows nobody.
    @Test func aCloneWithNoGitIdentityFailsWithGitsReasonAndCommitsOnceItHasOne() throws {
        let work = try TemporaryFolder()
        let (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)
        let fixtures = try TemporaryFolder()
        let first = try TestPKI.mint(in: fixtures, name: "first", bundle: "com.example.ci", days: 300)
        #expect(try alice.run(["import", first]).status == 0)
        let keys = try TeamStoreTests.newIdentity()
        #expect(try alice.run(["team", "add", "ci", keys.recipient]).status == 0)
        let clone = work.path("ci")
        #expect(try CLI.runProgram("git", ["clone", "--quiet", bare, clone]).status == 0)
        // No global or system configuration, and git told never to make an identity up.
        let config = work.path("gitconfig")
        try "[user]\n\tuseConfigOnly = true\n".write(toFile: config, atomically: true, encoding: .utf8)
        let nobody: [String: String] = [
            "APNSCTL_IDENTITY": keys.identity, "GIT_CONFIG_GLOBAL": config, "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": work.path("ci-home"),
        ]
        let ci = Member(
            name: "ci",
            store: clone,
            environment: nobody,
            removeEnvironment: [
                "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
                "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
            ]
        )
        let second = try TestPKI.mint(in: fixtures, name: "second", bundle: "com.example.ci", days: 400)
        let before = try Self.remoteHead(bare)
        let rotated = try ci.run(["import", second, "--replace", "com.example.ci-universal"])
            .exited(2, stderr: "Please tell me who you are")
        #expect(rotated.stderr.contains("fatal: no email was given"), "git's whole reason: \(rotated.stderr)")
        #expect(rotated.stderr.contains("apnsctl team sync"), "\(rotated.stderr)")
        let syncing = try ci.run(["team", "sync"])
        #expect(syncing.status != 0, "\(syncing.stdout)\(syncing.stderr)")
        #expect(syncing.stderr.contains("config user.email"), "\(syncing.stderr)")
        #expect(try Self.remoteHead(bare) == before)
        // The commands as printed (placeholders and all), in the clone's environment.
        let tell = try Self.step("Tell git who commits here: ", in: rotated.stderr)
        let told = tell.components(separatedBy: " (with your own name")[0]
        #expect(told.contains("config user.name \"Your Name\""), "\(told)")
        try CLI.runProgram("/bin/sh", ["-c", told], environment: nobody).succeeded(context: "\(told)")
        try ci.run(["team", "sync"]).succeeded()
        #expect(try Self.remoteHead(bare) != before)
        #expect(try alice.run(["team", "sync"]).status == 0)
        let newSHA = try TeamStoreTests.fingerprint(ofCertificateIn: second)
        #expect(
            try TeamStoreTests.sha256(of: alice.run(["list", "--json"]), alias: "com.example.ci-universal") == newSHA
        )
    }
}
