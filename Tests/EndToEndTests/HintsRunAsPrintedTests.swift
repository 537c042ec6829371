import Foundation
import TestSupport
import Testing

/// Every hint that names an `apnsctl` command, in the flows of a credential's life, is run
/// exactly as printed (through a shell, so its quoting counts too) and must do what it says.
@Suite(.needsPrivateSecretService)
struct HintsRunAsPrintedTests {
    /// The `apnsctl …` commands between backticks in a command's output.
    static func commands(in text: String) -> [String] {
        text.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element).filter {
            $0.hasPrefix("apnsctl ")
        }
    }

    /// Runs a printed command line in a shell that finds the binary under test as `apnsctl`.
    static func runAsPrinted(
        _ command: String,
        environment: [String: String] = [:],
        removeEnvironment: [String] = []
    ) throws -> CLI.Result {
        let folder = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        var environment = environment
        environment["PATH"] = folder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try CLI.runProgram(
            "/bin/sh",
            ["-c", command],
            environment: environment,
            removeEnvironment: removeEnvironment
        )
    }

    /// The shell metacharacters of a command line that no quote protects: `|`, `;`, `&`, `<`,
    /// `>`, a backtick, or `$(`.
    static func unquotedMetacharacters(in command: String) -> [String] {
        var found: [String] = []
        var quote: Character?
        var escaped = false
        let characters = Array(command)
        for (index, character) in characters.enumerated() {
            if escaped {
                escaped = false
                continue
            }
            switch (quote, character) {
            case (nil, "\\"), ("\"", "\\"): escaped = true
            case (nil, "'"), (nil, "\""): quote = character
            case ("'", "'"), ("\"", "\""): quote = nil
            case (nil, "|"), (nil, ";"), (nil, "&"), (nil, "<"), (nil, ">"), (nil, "`"): found.append(String(character))
            case (nil, "$"), ("\"", "$"):
                if index + 1 < characters.count, characters[index + 1] == "(" { found.append("$(") }
            case ("\"", "`"): found.append("`")
            default: break
            }
        }
        return found
    }

    /// A printed command must parse as one shell command with nothing unquoted that would run
    /// something else.
    static func expectSafeToPaste(_ command: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let parsed = try CLI.runProgram("bash", ["-n", "-c", command])
        #expect(parsed.status == 0, "bash -n: \(command)\n\(parsed.stderr)", sourceLocation: sourceLocation)
        #expect(
            unquotedMetacharacters(in: command).isEmpty,
            "unquoted shell metacharacters in \(command)",
            sourceLocation: sourceLocation
        )
    }

    @Test func theMetacharacterCheckCanFail() {
        #expect(Self.unquotedMetacharacters(in: "apnsctl update a --environment sandbox|production") == ["|"])
        #expect(Self.unquotedMetacharacters(in: "apnsctl x $(id) `id` a;b") == ["$(", "`", "`", ";"])
        #expect(Self.unquotedMetacharacters(in: "apnsctl update a --topic \"<BUNDLE-ID>\" 'x|y'").isEmpty)
    }

    @Test func aPlaceholderPastedUnchangedIsRefusedAndChangesNothing() throws {
        let store = try StoreCommandTests.Store()
        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        #expect(try store.run(["import", key, "--team-id", "ABCDE12345"]).status == 0)
        let before = try store.listJSON()
        // Nothing says which app or environment: the hint holds a placeholder.
        let incomplete = try store.run(["check", "token-ABC123DEFG"])
        #expect(incomplete.status == 1)
        // The key imported again: the hint changes it in place rather than removing it.
        let again = try store.run(["import", key, "--team-id", "ABCDE12345"])
        #expect(again.status == 1)
        #expect(!again.stderr.contains("apnsctl remove"), "\(again.stderr)")
        var placeholders = 0
        for command in Self.commands(in: incomplete.stdout + again.stderr) {
            try Self.expectSafeToPaste(command)
            guard command.contains("<BUNDLE-ID>") else { continue }
            placeholders += 1
            #expect(command.contains("--topic \"<BUNDLE-ID>\""), "\(command)")
            let pasted = try Self.runAsPrinted(command)
            #expect(pasted.status == 64, "\(command)\n\(pasted.stderr)")
            #expect(pasted.stderr.contains("placeholder"))
            #expect(NSDictionary(dictionary: ["c": try store.listJSON()]) == NSDictionary(dictionary: ["c": before]))
        }
        #expect(placeholders == 2)
    }

    @Test func everyHintedCommandWorksAsPrinted() throws {
        let store = try StoreCommandTests.Store()
        let folder = try TemporaryFolder()
        var ran: [String] = []
        func hinted(_ result: CLI.Result, _ flow: String) throws -> [String] {
            let found = Self.commands(in: result.stdout + result.stderr)
            #expect(!found.isEmpty, "\(flow) printed no command: \(result.stdout)\(result.stderr)")
            return found
        }
        func paste(_ command: String) throws -> CLI.Result {
            ran.append(command)
            try Self.expectSafeToPaste(command)
            return try Self.runAsPrinted(command)
        }

        // 1. A token key imported without its metadata: check names `apnsctl update …`.
        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        #expect(try store.run(["import", key, "--team-id", "ABCDE12345"]).status == 0)
        let deploy = ["--environment", "production", "--topic", "com.example.app"]
        let incomplete = try store.run(["check", "token-ABC123DEFG"] + deploy)
        #expect(incomplete.status == 1)
        for command in try hinted(incomplete, "incomplete token key") {
            #expect(command.hasPrefix("apnsctl update token-ABC123DEFG"))
            let result = try paste(command)
            #expect(result.status == 0, "\(command)\n\(result.stderr)")
        }
        #expect(try store.run(["check", "token-ABC123DEFG"] + deploy).status == 0)

        // 2. The key asked about another app: the hint records it next to the first.
        let otherApp = try store.run(["check", "token-ABC123DEFG", "--topic", "com.example.other"])
        #expect(otherApp.status == 1)
        for command in try hinted(otherApp, "token key for another app") {
            let result = try paste(command)
            #expect(result.status == 0, "\(command)\n\(result.stderr)")
        }
        #expect(try store.run(["check", "token-ABC123DEFG", "--topic", "com.example.other"]).status == 0)
        #expect(try store.run(["check", "token-ABC123DEFG", "--topic", "com.example.app"]).status == 0)

        // 3. With --topic alone, the hints of skipped credentials work too.
        let key2 = folder.path("AuthKey_XYZ987WVUT.p8")
        try FileManager.default.copyItem(atPath: key, toPath: key2)
        #expect(try store.run(["import", key2, "--team-id", "ABCDE12345"]).status == 0)
        let scoped = try store.run(["check", "--topic", "com.example.third", "--environment", "sandbox"])
        #expect(scoped.status == 1, "\(scoped.stdout)")
        for command in try hinted(scoped, "check --topic") {
            let result = try paste(command)
            #expect(result.status == 0, "\(command)\n\(result.stderr)")
        }
        #expect(try store.run(["check", "--topic", "com.example.third", "--environment", "sandbox"]).status == 0)

        // 4. A rotation refused for going backwards: the hint's inspect shows the dates.
        let long = try TestPKI.mint(in: folder, name: "long", bundle: "com.example.hint", days: 400)
        let short = try TestPKI.mint(in: folder, name: "short", bundle: "com.example.hint", days: 20)
        #expect(try store.run(["import", long]).status == 0)
        let backwards = try store.run(["import", short, "--replace", "com.example.hint-universal"])
        #expect(backwards.status == 1)
        for command in try hinted(backwards, "shorter rotation") {
            let result = try paste(command)
            // inspect exits 1 for a certificate within the warning window, after showing its dates.
            #expect(result.status == 1, "\(command)\n\(result.stderr)")
            let expiry = [19, 20, 21].map(CredentialLifecycleTests.day(inDays:))
            #expect(expiry.contains { result.stdout.contains($0) }, "\(result.stdout)")
        }

        // 5. A secret removed outside apnsctl: check's hint removes the entry.
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        _ = try StoreCommandTests.secretTool([
            "clear", "application", "apnsctl", "store", store.path, "alias", "com.example.app-sandbox",
        ])
        let missing = try store.run(["check", "com.example.app-sandbox"])
        #expect(missing.status == 2)
        for command in try hinted(missing, "secret missing") {
            let result = try paste(command)
            #expect(result.status == 0, "\(command)\n\(result.stderr)")
        }
        #expect(try store.listJSON().allSatisfy { $0["credential"] as? String != "com.example.app-sandbox" })

        // 6. The same certificate twice: `list` and `remove` as printed.
        let again = try store.run(["import", long])
        #expect(again.status == 1)
        let twice = try hinted(again, "already imported")
        for command in twice.sorted(by: { $0.contains(" list") && !$1.contains(" list") }) {
            let result = try paste(command)
            #expect(result.status == 0, "\(command)\n\(result.stderr)")
        }
        #expect(try store.listJSON().allSatisfy { $0["credential"] as? String != "com.example.hint-universal" })

        #expect(ran.count >= 6, "\(ran)")
        // Every command named this store, so that it acted on it.
        for command in ran where !command.hasPrefix("apnsctl inspect") {
            #expect(command.contains("--store \(store.path)"), "\(command)")
        }
    }
}
