import Foundation
import TestSupport
import Testing

/// A folder that is not a store (the root folder, a folder of other things, a regular file) is
/// refused with exit 2 and its path named, by every command that takes --store, before anything
/// reads or writes it, and without needing a Secret Service.
struct NotAStoreTests {
    static let token = String(repeating: "ab", count: 32)

    /// One invocation of each command that takes --store.
    static let commands: [[String]] = [
        ["list"],
        ["list", "--json"],
        ["check"],
        ["check", "com.example.app-production", "--skip-secrets"],
        ["import", CLI.cert("pem/sandbox-bag-attributes.pem")],
        ["export", "com.example.app-production", "--format", "pem"],
        ["remove", "com.example.app-production"],
        ["remove", "--orphans"],
        ["send", "com.example.app-production", "--token", token, "--alert", "hi"],
        // A line send's direct reader leaves to the argument parser (an option given twice).
        ["send", "com.example.app-production", "--token", token, "--alert", "hi", "--alert", "hello"],
        ["handshake", "com.example.app-production"],
        ["preflight", "--environment", "sandbox"],
    ]

    func refuses(_ store: String, _ arguments: [String]) throws {
        let result = try CLI.run(arguments + ["--store", store], removeEnvironment: ["DBUS_SESSION_BUS_ADDRESS"])
            .exited(2, context: "\(arguments) --store \(store)")
        #expect(result.stderr.contains("\(store): "), "\(arguments): \(result.stderr)")
        // Told once: a command line read twice (send's, before the whole tree's) reported it twice.
        #expect(result.stderr.components(separatedBy: "\(store): ").count == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("not"))
        // Never "the store is empty"; with --json, stdout holds the error object instead.
        #expect(!result.stdout.contains("is empty") && !result.stderr.contains("empty store"))
        if arguments.contains("--json") {
            #expect(
                errorCode(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:])
                    == "not_a_store"
            )
        }
    }

    @Test(arguments: commands)
    func theRootFolderIsRefused(_ arguments: [String]) throws {
        try refuses("/", arguments)
        #expect(!FileManager.default.fileExists(atPath: "/index.json"))
        #expect(!FileManager.default.fileExists(atPath: "/.lock"))
        #expect(!FileManager.default.fileExists(atPath: "/credentials"))
    }

    @Test(arguments: commands)
    func aRegularFileIsRefused(_ arguments: [String]) throws {
        let folder = try TemporaryFolder()
        let file = folder.path("notes.txt")
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: file))
        try refuses(file, arguments)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("not a store".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["notes.txt"])
    }

    @Test(arguments: commands)
    func aFolderOfOtherThingsIsRefused(_ arguments: [String]) throws {
        // Like a home folder: other files, and no index.
        let folder = try TemporaryFolder()
        let home = folder.path("home")
        try FileManager.default.createDirectory(atPath: home + "/Documents", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: home + "/.bashrc"))
        let before = try snapshot(home)
        try refuses(home, arguments)
        #expect(try snapshot(home) == before)
    }

    @Test func theDefaultStoreIsJudgedToo() throws {
        let folder = try TemporaryFolder()
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.path("apnsctl")))
        try CLI.run(
            ["list"],
            environment: ["XDG_DATA_HOME": folder.url.path],
            removeEnvironment: ["APNSCTL_STORE"]
        ).exited(2, stderr: folder.path("apnsctl"))
    }
}
