import CredentialFormats
import Foundation
import PushChecks
import PushStore
import TestSupport
import Testing

/// Secrets read together (what `check` over a whole store does) against a real Secret Service:
/// the same secrets as item-by-item lookups, and what the batch leaves out is read alone, with
/// the same findings as before.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["APNSCTL_INSIDE_SECRET_SERVICE"] == "1",
        "needs the private Secret Service of scripts/with-secret-service"
    )
)
struct BatchSecretsTests {
    @Test func theBatchGivesWhatEachLookupGives() async throws {
        let folder = try TemporaryFolder()
        let store = folder.path("store")
        let secrets = LibSecretStore()
        let key = SecretItem(store: store, alias: "key", kind: .tokenKey, identifier: "KEY0000001")
        let password = SecretItem(store: store, alias: "bundle", kind: .pkcs12Password, identifier: "ab12")
        let privateKey = SecretItem(store: store, alias: "pem", kind: .privateKey, identifier: "cd34")
        let otherStore = SecretItem(
            store: folder.path("other"),
            alias: "key",
            kind: .tokenKey,
            identifier: "KEY0000002"
        )
        // Not base64: the one-item lookup refuses it, so the batch must leave it out.
        let damaged = SecretItem(store: store, alias: "damaged", kind: .tokenKey, identifier: "KEY0000003")
        let missing = SecretItem(store: store, alias: "missing", kind: .tokenKey, identifier: "KEY0000004")
        // The same alias and kind as `key`, another key ID: a rotation's predecessor, not `key`.
        let rotated = SecretItem(store: store, alias: "key", kind: .tokenKey, identifier: "KEY0000005")
        let stored: [(SecretItem, [UInt8])] = [
            (key, [0x30, 0x00, 0xff, 0x7f, 0x0a]),
            (password, Array("pass word with ünïcode".utf8)),
            (privateKey, Array(repeating: 0x42, count: 1200)),
            (otherStore, [1, 2, 3]),
        ]
        defer {
            SecretTool.clear(store: store)
            SecretTool.clear(store: folder.path("other"))
        }
        for (item, bytes) in stored { try await secrets.store(SecretBytes(bytes), for: item) }
        try SecretTool.store("not base64 !", for: damaged)

        let asked = [key, password, privateKey, otherStore, damaged, missing, rotated]
        let batch = try await secrets.lookup(asked)
        #expect(Set(batch.keys) == [key, password, privateKey, otherStore])
        for (item, bytes) in stored {
            #expect(batch[item]?.bytes == bytes, "\(item.alias)")
            #expect(try await secrets.lookup(item)?.bytes == bytes, "\(item.alias)")
        }
        #expect(try await secrets.lookup(missing) == nil)
        #expect(try await secrets.lookup(rotated) == nil)
        await #expect(throws: CredentialError.self) { try await secrets.lookup(damaged) }
        #expect(try await secrets.lookup([SecretItem]()).isEmpty)
    }

    /// Two keyring items with an item's attributes (one with an attribute more): the one-item
    /// search finds both, so the batch must leave the item out for it to be read alone.
    @Test func theBatchLeavesOutAnItemTwoKeyringItemsClaim() async throws {
        let folder = try TemporaryFolder()
        let store = folder.path("store")
        let secrets = LibSecretStore()
        let claimed = SecretItem(store: store, alias: "key", kind: .tokenKey, identifier: "KEY0000001")
        let alone = SecretItem(store: store, alias: "other", kind: .tokenKey, identifier: "KEY0000002")
        defer { SecretTool.clear(store: store) }
        try await secrets.store(SecretBytes([1, 2, 3]), for: claimed)
        try await secrets.store(SecretBytes([4, 5, 6]), for: alone)
        try SecretTool.store("BAgI", for: claimed, extra: [("note", "a copy")])
        let batch = try await secrets.lookup([claimed, alone])
        #expect(Set(batch.keys) == [alone])
        #expect(batch[alone]?.bytes == [4, 5, 6])
    }

    /// The store's items as the orphan search lists them: its own kinds only, not another
    /// store's, not one stored under another schema, whatever their number.
    @Test func aStoresItemsAreListedByTheirAttributes() async throws {
        let folder = try TemporaryFolder()
        let store = folder.path("store")
        let secrets = LibSecretStore()
        var expected: [SecretItem] = (1...40).map {
            SecretItem(store: store, alias: "key\($0)", kind: .tokenKey, identifier: String(format: "KEY%07d", $0))
        }
        expected.append(SecretItem(store: store, alias: "bundle", kind: .pkcs12Password, identifier: "ab12"))
        expected.append(SecretItem(store: store, alias: "pem", kind: .privateKey, identifier: "cd34"))
        let otherStore = SecretItem(
            store: folder.path("other"),
            alias: "key1",
            kind: .tokenKey,
            identifier: "KEY0000001"
        )
        defer {
            SecretTool.clear(store: store)
            SecretTool.clear(store: folder.path("other"))
        }
        for item in expected + [otherStore] { try await secrets.store(SecretBytes([7]), for: item) }
        // A kind this version does not know, and an item of another schema with the same attributes.
        let future = SecretItem(store: store, alias: "future", kind: .tokenKey, identifier: "KEY0000099")
        try SecretTool.store("x", for: future, extra: [("kind", "future-kind")])
        let foreign = SecretItem(store: store, alias: "foreign", kind: .tokenKey, identifier: "KEY0000098")
        try SecretTool.store("x", for: foreign, schema: "org.example.Other")
        defer { for alias in ["future", "foreign"] { try? removeRaw(store: store, alias: alias) } }
        let listed = try await secrets.items(store: store)
        #expect(listed.count == expected.count)
        #expect(Set(listed) == Set(expected))
        #expect(try await secrets.items(store: folder.path("nothing here")).isEmpty)
        // The batch read's one search of each store lists the same items.
        let read = try await secrets.lookupListing([expected[0], otherStore])
        #expect(Set(read.listed[store] ?? []) == Set(expected))
        #expect(read.listed[folder.path("other")] == [otherStore])
        #expect(read.secrets.count == 2)
    }

    /// Removes every item of `alias` in `store` whatever its other attributes, as `secret-tool clear` does.
    private func removeRaw(store: String, alias: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["secret-tool", "clear", "application", "apnsctl", "store", store, "alias", alias]
        try process.run()
        process.waitUntilExit()
    }

    /// Writes `text` as the item's secret as it is, as a program other than apnsctl would.

    @Test func aCheckOverTheStoreFindsWhatOneByOneFinds() async throws {
        let fixture = try await CheckJudgingTests.Fixture()
        let store = fixture.store
        let watchKey = try #require(try await store.credential(named: "watch-key"))
        #expect(try await store.secrets.remove(watchKey.secretItem(store: store.path)))

        let whole = try await fixture.check(CheckRequest())
        let judge = CheckJudge(store: store, expectations: CheckRequest().expectations)
        for credential in try await store.list() {
            let alone = await judge.check(.stored(credential))
            let together = try #require(whole.results.first { $0.name == credential.alias })
            #expect(together.findings.map(\.code) == alone.findings.map(\.code), "\(credential.alias)")
            #expect(together.findings.map(\.message) == alone.findings.map(\.message), "\(credential.alias)")
            #expect(together.error?.code == alone.error?.code, "\(credential.alias)")
        }
        #expect(
            whole.results.first { $0.name == "watch-key" }?.findings.map(\.code.rawValue) == ["secret_missing"]
        )

        // A secret removed through the preloaded store is gone from it too.
        let preloaded = await store.preloadingSecrets(for: try await store.list())
        #expect(preloaded.unavailable == nil)
        let untagged = try #require(try await store.credential(named: "untagged-key"))
        let item = untagged.secretItem(store: store.path)
        #expect(try await preloaded.store.secrets.lookup(item) != nil)
        #expect(try await preloaded.store.secrets.remove(item))
        #expect(try await preloaded.store.secrets.lookup(item) == nil)
        #expect(try await store.secrets.lookup(item) == nil)
    }

    /// The orphan search through the batch read's listing: a secret the index no longer names
    /// is found, and one removed with its entry after the batch read is not reported.
    @Test func theBatchReadsListingFindsOrphansAsTheyAreNow() async throws {
        let fixture = try await CheckJudgingTests.Fixture()
        let store = fixture.store
        let orphan = SecretItem(store: store.path, alias: "gone", kind: .tokenKey, identifier: "GONE000001")
        defer { SecretTool.clear(store: store.path) }
        try await store.secrets.store(SecretBytes([1, 2, 3]), for: orphan)
        let preloaded = await store.preloadingSecrets(for: try await store.list())
        #expect(preloaded.unavailable == nil)
        #expect(try await preloaded.store.orphanedSecrets() == [orphan])

        _ = try await store.remove(named: "untagged-key")
        #expect(try await store.secrets.remove(orphan))
        #expect(try await preloaded.store.orphanedSecrets().isEmpty)
    }
}
