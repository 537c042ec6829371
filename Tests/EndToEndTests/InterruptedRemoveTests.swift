import CredentialFormats
import Foundation
import PushStore
import TestSupport
import Testing

/// The real Secret Service, except that removing a secret fails as a Secret Service that went
/// away mid-command would: a double of that one failure, not of the store.
struct SecretStoreFailingOnRemove: SecretStore {
    let real = LibSecretStore()

    func store(_ secret: SecretBytes, for item: SecretItem) async throws { try await real.store(secret, for: item) }
    func lookup(_ item: SecretItem) async throws -> SecretBytes? { try await real.lookup(item) }
    func checkAvailable() async throws { try await real.checkAvailable() }
    func items(store: String) async throws -> [SecretItem] { try await real.items(store: store) }

    @discardableResult
    func remove(_ item: SecretItem) throws -> Bool {
        throw CredentialError(
            .secretStoreUnavailable,
            path: nil,
            "The Secret Service could not remove the secret: the connection was closed."
        )
    }
}

/// A removal whose last step (the secret's removal) fails is completed by the next command on
/// the store, so nothing needs `remove --orphans`; a secret the index no longer names for another
/// reason (an index edited by hand) is an orphan that `check` reports and its hint removes.
@Suite(.needsPrivateSecretService)
struct InterruptedRemoveTests {
    typealias Store = StoreCommandTests.Store
    static let alias = "com.example.app-production"

    static func secret(_ store: Store, _ alias: String) throws -> String {
        try StoreCommandTests.secretTool(["lookup", "application", "apnsctl", "store", store.path, "alias", alias])
            .stdout
    }

    /// Removes `alias` through the library with the secret's removal failing.
    static func interruptedRemove(_ store: Store) async throws {
        let library = CredentialStore(root: URL(fileURLWithPath: store.path), secrets: SecretStoreFailingOnRemove())
        let removal = try await library.remove(alias: alias)
        #expect(removal.credential?.alias == alias)
        #expect(removal.secretError != nil)
        #expect(!removal.removedSecret)
        #expect(removal.files.count == 2)
    }

    /// Takes `alias` out of index.json and its files out of the folder, as an index restored
    /// from a backup older than its import would: its secret is then an orphan.
    static func orphan(_ store: Store) throws {
        let url = URL(fileURLWithPath: store.path + "/index.json")
        var index = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var credentials = try #require(index["credentials"] as? [[String: Any]])
        let entry = try #require(credentials.first { $0["alias"] as? String == alias })
        for key in ["certificate_file", "bundle_file"] {
            if let file = entry[key] as? String { try FileManager.default.removeItem(atPath: store.path + "/" + file) }
        }
        credentials.removeAll { $0["alias"] as? String == alias }
        index["credentials"] = credentials
        try JSONSerialization.data(withJSONObject: index).write(to: url)
    }

    /// The commands between backquotes in `text`.
    static func commands(in text: String) -> [String] {
        text.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
    }

    /// Runs `command` as a shell reads it when pasted, with `apnsctl` being the binary under test.
    static func paste(_ command: String) throws -> CLI.Result {
        try CLI.runProgram(
            "/bin/sh",
            ["-c", "apnsctl() { \"$APNSCTL\" \"$@\"; }\n" + command],
            environment: ["APNSCTL": CLI.binary]
        )
    }

    /// Before, an interrupted removal left an orphaned secret that only `remove --orphans`
    /// cleared; now the removal is journaled, and the next command finishes it.
    @Test func theNextCommandCompletesAnInterruptedRemoval() async throws {
        let store = try Store.withProductionAndSandbox()
        try await Self.interruptedRemove(store)
        // The secret the Secret Service could not remove waits in the journal.
        #expect(try Self.secret(store, Self.alias) == StoreCommandTests.password)
        #expect(FileManager.default.fileExists(atPath: store.path + "/.writing"))

        #expect(try store.listJSON().compactMap { $0["credential"] as? String } == ["com.example.app-sandbox"])
        #expect(try Self.secret(store, Self.alias).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: store.path + "/.writing"))
        let files = try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials")
        #expect(files.allSatisfy { $0.hasPrefix("com.example.app-sandbox.") })
        let checked = try store.run(["check"])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        #expect(!checked.stdout.contains("orphan"))
        #expect(!(try Self.secret(store, "com.example.app-sandbox")).isEmpty)
        #expect(try store.run(["remove", "--orphans"]).stdout.contains("no orphaned secrets"))
    }

    @Test func checkNamesTheCleanupOfAnOrphanedSecret() throws {
        let store = try Store.withProductionAndSandbox()
        try Self.orphan(store)
        #expect(try store.listJSON().compactMap { $0["credential"] as? String } == ["com.example.app-sandbox"])
        #expect(try Self.secret(store, Self.alias) == StoreCommandTests.password)

        // check reports the orphaned secret as a problem and names the cleanup for this store.
        let checked = try store.run(["check"])
        #expect(checked.status == 1, "\(checked.stdout)\(checked.stderr)")
        #expect(checked.stdout.contains("\(Self.alias) (orphaned secret)"))
        #expect(checked.stdout.contains("apnsctl: \(Self.alias)"))
        let cleanup = try #require(Self.commands(in: checked.stdout).first { $0.contains("remove") })
        #expect(cleanup == "apnsctl remove --orphans --store \(store.path)")
        let json = try store.run(["check", "--json"])
        #expect(json.stdout.contains("\"orphaned_secret\""))
        // A metadata-only check does not touch the Secret Service, so it cannot see orphans.
        #expect(try store.run(["check", "--skip-secrets"]).status == 0)

        let cleaned = try Self.paste(cleanup)
        #expect(cleaned.status == 0, "\(cleaned.stderr)")
        #expect(cleaned.stdout.contains("apnsctl: \(Self.alias)"))
        #expect(try Self.secret(store, Self.alias).isEmpty)
        // The healthy credential's secret is untouched, and the store checks clean.
        #expect(!(try Self.secret(store, "com.example.app-sandbox")).isEmpty)
        let after = try store.run(["check"])
        #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
        let again = try Self.paste(cleanup)
        #expect(again.status == 0)
        #expect(again.stdout.contains("no orphaned secrets"))
    }

    @Test func removingTheAliasAgainCleansItsOrphanedSecret() throws {
        let store = try Store.withProductionAndSandbox()
        try Self.orphan(store)
        let removed = try store.run(["remove", Self.alias])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("orphaned secret"))
        #expect(try Self.secret(store, Self.alias).isEmpty)
        #expect(try store.run(["check"]).status == 0)
        // And once it is gone, the alias is unknown again.
        #expect(try store.run(["remove", Self.alias]).status == 2)
    }

    @Test func anOrphanOfAnEmptiedStoreIsStillReported() throws {
        let store = try Store()
        let imported = try store.importFixtureBundle("p12/openssl3-default.p12")
        #expect(imported.status == 0)
        try Self.orphan(store)
        let checked = try store.run(["check"])
        #expect(checked.status == 1, "\(checked.stdout)\(checked.stderr)")
        #expect(checked.stdout.contains("orphaned secret"))
        #expect(try store.run(["remove", "--orphans"]).status == 0)
        #expect(try Self.secret(store, Self.alias).isEmpty)
    }
}
