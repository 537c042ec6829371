import Foundation
import TestSupport
import Testing

/// A store whose index is missing or unreadable while credential files are present is an error
/// that says how to recover, never an empty store; nothing that changes the store runs on it,
/// and no credential file is deleted.
@Suite(.needsPrivateSecretService)
struct MissingIndexTests {
    typealias Store = StoreCommandTests.Store

    enum Damage: String, CaseIterable, CustomTestStringConvertible {
        case deleted, garbage, unreadable
        var testDescription: String { rawValue }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedIndexIsAnErrorAndNothingIsDeleted(_ damage: Damage) throws {
        let store = try Store.withProductionAndSandbox()
        let index = store.path + "/index.json"
        switch damage {
        case .deleted: try FileManager.default.removeItem(atPath: index)
        case .garbage:
            try Data("{\"schema_version\": 1, \"credentials\": [".utf8).write(to: URL(fileURLWithPath: index))
        case .unreadable:
            // A folder where the index should be: no user, root included, can read it as a file.
            try FileManager.default.removeItem(atPath: index)
            try FileManager.default.createDirectory(atPath: index, withIntermediateDirectories: false)
        }
        let files = try snapshot(store.path + "/credentials")
        #expect(files.count == 3)
        let aFile = try #require(files.keys.sorted().first)

        for arguments in [["list"], ["list", "--json"], ["check"], ["check", "--skip-secrets"]] {
            let result = try store.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(!result.stdout.contains("is empty"))
            #expect(result.stderr.contains(store.path))
            #expect(result.stderr.contains("Restore index.json from a backup"))
            // Which files are there, so the user knows what to recover.
            #expect(result.stderr.contains(aFile))
        }

        // Changes refuse to run: an import (whose sweep would once have deleted every file), a
        // rotation, a removal and the orphan cleanup.
        let attempts: [([String], String?)] = [
            (["import", CLI.cert("p12/3des-only.p12"), "--password-stdin"], StoreCommandTests.password + "\n"),
            (
                ["import", CLI.cert("p12/voip.p12"), "--password-stdin", "--alias", "voip"],
                StoreCommandTests.password + "\n"
            ),
            (["remove", "com.example.app-production"], nil),
            (["remove", "--orphans"], nil),
        ]
        for (arguments, stdin) in attempts {
            let result = try store.run(arguments, stdin: stdin)
            #expect(result.status == 2, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains(store.path))
            #expect(try snapshot(store.path + "/credentials") == files)
        }
        // The secrets are all still there to recover with.
        for alias in ["com.example.app-production", "com.example.app-sandbox"] {
            #expect(!(try InterruptedRemoveTests.secret(store, alias)).isEmpty)
        }
        if damage == .deleted {
            #expect(!FileManager.default.fileExists(atPath: store.path + "/index.json"))
        }
    }

    @Test func theDocumentedRecoveryWorks() throws {
        let store = try Store.withProductionAndSandbox()
        try FileManager.default.removeItem(atPath: store.path + "/index.json")
        // Move the folder aside and import again from the original files.
        let aside = store.folder.path("store.damaged")
        try FileManager.default.moveItem(atPath: store.path, toPath: aside)
        try store.importProductionAndSandbox()
        #expect(try store.run(["check"]).status == 0)
    }

    @Test func anEmptyOrNewFolderIsStillANewStore() throws {
        let store = try Store()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)
        let listed = try store.run(["list"])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("is empty"))
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        // A store's skeleton without an index (an interrupted first use) holds nothing to lose.
        let skeleton = try Store()
        try FileManager.default.createDirectory(
            atPath: skeleton.path + "/credentials",
            withIntermediateDirectories: true
        )
        #expect(FileManager.default.createFile(atPath: skeleton.path + "/.lock", contents: nil))
        #expect(try skeleton.run(["list"]).status == 0)
        #expect(try skeleton.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        #expect(FileManager.default.fileExists(atPath: skeleton.path + "/index.json"))
    }
}

extension StoreCommandTests.Store {
    /// Imports the fixture bundle `bundle` (certs/…) with its password on standard input, and `options`.
    func importFixtureBundle(_ bundle: String, _ options: [String] = []) throws -> CLI.Result {
        try run(["import", CLI.cert(bundle), "--password-stdin"] + options, stdin: StoreCommandTests.password + "\n")
    }

    /// Imports com.example.app-production (a PKCS#12) and com.example.app-sandbox (a PEM), and expects both stored.
    func importProductionAndSandbox() throws {
        let imported = try importFixtureBundle("p12/openssl3-default.p12")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
    }

    /// A new store holding com.example.app-production and com.example.app-sandbox.
    static func withProductionAndSandbox() throws -> StoreCommandTests.Store {
        let store = try StoreCommandTests.Store()
        try store.importProductionAndSandbox()
        return store
    }
}
