import Foundation
import TestSupport
import Testing

/// What the Debian package ships besides the binary, checked against the binary under test:
/// `--version`, the generated man pages and the shell completion scripts.
struct PackagingTests {
    /// Every command path (`apnsctl`, `apnsctl gateway serve`, …) as the binary describes itself.
    static func commandPaths() throws -> [[String]] {
        let json = try CLI.run(["--experimental-dump-help"]).succeeded().json()
        var paths: [[String]] = []
        func walk(_ command: [String: Any], _ prefix: [String]) {
            let path = prefix + [command["commandName"] as? String ?? "?"]
            paths.append(path)
            for subcommand in command["subcommands"] as? [[String: Any]] ?? []
            where subcommand["commandName"] as? String != "help" {
                walk(subcommand, path)
            }
        }
        walk(try #require(json["command"] as? [String: Any]), [])
        return paths
    }

    @Test func versionNamesTheReleaseTheCommitAndTheRunningOpenSSL() throws {
        let result = try CLI.run(["--version"]).succeeded()
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(result.stdout)")
        #expect(lines[0].range(of: #"^apnsctl \d+\.\d+\.\d+$"#, options: .regularExpression) != nil, "\(lines[0])")
        // The OpenSSL the process loaded, as the openssl tool linked to the same library reports it.
        let openssl = try CLI.runProgram("openssl", ["version"])
        let library =
            openssl.stdout.range(of: #"\(Library: ([^)]*)\)"#, options: .regularExpression).map {
                String(openssl.stdout[$0].dropFirst("(Library: ".count).dropLast())
            } ?? openssl.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(lines[2] == library)
        // scripts/test bakes in the commit being tested; a plain build says "unknown".
        let commit = try CLI.runProgram("git", ["-C", CLI.packageRoot.path, "rev-parse", "--short=12", "HEAD"])
        let head = commit.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let generated = CLI.packageRoot.appendingPathComponent("Sources/apnsctl/BuildCommit.generated.swift").path
        if FileManager.default.fileExists(atPath: generated), commit.status == 0 {
            #expect(lines[1].hasPrefix("commit: \(head)"), "\(lines[1]) is not HEAD \(head)")
        } else {
            #expect(lines[1] == "commit: unknown")
        }
    }

    /// The folder scripts/test generated the man pages in (APNSCTL_MANUALS).
    static let manuals = ProcessInfo.processInfo.environment["APNSCTL_MANUALS"]

    @Test(.enabled(if: manuals != nil, "needs the man pages scripts/test generates (APNSCTL_MANUALS)"))
    func everyCommandHasAManPageThatManRenders() throws {
        let folder = try #require(Self.manuals)
        for path in try Self.commandPaths() {
            // The generator names a subcommand's page after its path with dots: apnsctl.gateway.serve.1.
            let page = folder + "/" + path.joined(separator: ".") + ".1"
            try #require(FileManager.default.fileExists(atPath: page), "no man page \(page)")
            let rendered = try CLI.runProgram(
                "man",
                ["--warnings", "-l", page],
                environment: ["MANPAGER": "cat", "MANWIDTH": "100", "LANG": "C.UTF-8"]
            ).succeeded(context: "man -l \(page)")
            // The generator separates paragraphs with empty lines, which mdoc only notes; any other
            // warning (an unknown macro, a bad escape) is a page that renders wrong.
            let warnings = rendered.stderr.split(separator: "\n").filter { !$0.contains("Empty input line") }
            #expect(warnings.isEmpty, "man -l \(page) warns: \(warnings.joined(separator: "\n"))")
            let text = rendered.stdout
            #expect(text.contains("SYNOPSIS"), "\(page)")
            #expect(text.contains(path.joined(separator: " ")), "\(page) does not name \(path.joined(separator: " "))")
            // The EXIT STATUS section lists the command's own statuses from its help, not the
            // generator's "0 on success, >0 if an error occurs".
            let exitStatus = text.components(separatedBy: "EXIT STATUS").dropFirst().first ?? ""
            #expect(!exitStatus.isEmpty, "\(page) has no EXIT STATUS section")
            #expect(!exitStatus.contains("if an error occurs"), "\(page): \(exitStatus)")
            #expect(exitStatus.contains("64") && exitStatus.contains("usage error"), "\(page): \(exitStatus)")
            if path.count > 1 {
                // The examples of --help reach the man page too.
                #expect(text.contains("Examples"), "\(page) has no examples")
                #expect(text.contains("apnsctl \(path.dropFirst().joined(separator: " "))"), "\(page)")
            }
        }
    }
}

/// The bash completion script, loaded in a real bash, completing from a real store.
@Suite(.needsSecretService)
struct BashCompletionTests {
    /// Loads the generated script into bash and asks `_apnsctl` to complete `words`, the last
    /// one being the word under the cursor; returns what bash would offer.
    static func complete(
        _ words: [String],
        in folder: String,
        environment: [String: String] = [:]
    ) throws -> [String] {
        let script = try CLI.run(["--generate-completion-script", "bash"]).succeeded()
        let scriptFile = folder + "/apnsctl.bash"
        try script.stdout.write(toFile: scriptFile, atomically: true, encoding: .utf8)
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        let program = """
            source "$1"
            cd "$2"
            COMP_WORDS=(\(quoted.joined(separator: " ")))
            COMP_CWORD=\(words.count - 1)
            COMP_LINE="${COMP_WORDS[*]}"
            COMP_POINT=${#COMP_LINE}
            _apnsctl apnsctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let binaryFolder = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        var environment = environment
        environment["PATH"] = binaryFolder + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let result = try CLI.runProgram(
            "bash",
            ["--norc", "--noprofile", "-c", program, "bash", scriptFile, folder],
            environment: environment
        ).succeeded()
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func completesTheStoredAliasesOfTheChosenStore() throws {
        let store = try StoreCommandTests.Store()
        let folder = try TemporaryFolder()
        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        #expect(try store.run(["import", key, "--team-id", "ABCDE12345", "--alias", "push-key"]).status == 0)
        let fromEnvironment = ["APNSCTL_STORE": store.path]

        // Where a credential is expected, the store's aliases.
        #expect(
            try Self.complete(["apnsctl", "check", ""], in: folder.url.path, environment: fromEnvironment) == [
                "push-key"
            ]
        )
        #expect(
            try Self.complete(["apnsctl", "export", "pu"], in: folder.url.path, environment: fromEnvironment) == [
                "push-key"
            ]
        )
        #expect(
            try Self.complete(["apnsctl", "send", ""], in: folder.url.path, environment: fromEnvironment).contains(
                "push-key"
            )
        )
        #expect(
            try Self.complete(["apnsctl", "remove", "x"], in: folder.url.path, environment: fromEnvironment).isEmpty
        )

        // --store on the command line wins over $APNSCTL_STORE, as it does when the command runs.
        let empty = folder.path("empty-store")
        let elsewhere = try Self.complete(
            ["apnsctl", "update", "--store", store.path, ""],
            in: folder.url.path,
            environment: ["APNSCTL_STORE": empty]
        )
        #expect(elsewhere == ["push-key"])
        #expect(
            try Self.complete(["apnsctl", "update", ""], in: folder.url.path, environment: ["APNSCTL_STORE": empty])
                .isEmpty
        )
    }

    @Test func completesFilesByKindAndTheValuesOfEnumeratedOptions() throws {
        let folder = try TemporaryFolder()
        for name in ["push.p12", "AuthKey_ABC123DEFG.p8", "notes.txt"] {
            _ = FileManager.default.createFile(atPath: folder.path(name), contents: Data())
        }
        let store = ["APNSCTL_STORE": folder.path("no-store")]
        // A credential file argument offers credential files, not other files.
        let files = try Self.complete(["apnsctl", "inspect", ""], in: folder.url.path, environment: store)
        #expect(files.contains("push.p12"))
        #expect(files.contains("AuthKey_ABC123DEFG.p8"))
        #expect(!files.contains("notes.txt"))
        // An alias-or-file argument offers credential files when no alias matches.
        let either = try Self.complete(["apnsctl", "handshake", "pu"], in: folder.url.path, environment: store)
        #expect(either == ["push.p12"])
        #expect(
            try Self.complete(["apnsctl", "check", "--environment", ""], in: folder.url.path, environment: store)
                .sorted()
                == ["production", "sandbox"]
        )
        #expect(
            Set(try Self.complete(["apnsctl", "check", "--format", ""], in: folder.url.path, environment: store))
                == ["text", "json", "prometheus", "junit"]
        )
        #expect(
            try Self.complete(["apnsctl", "send", "x", "--push-type", "vo"], in: folder.url.path, environment: store)
                == [
                    "voip"
                ]
        )
    }
}
