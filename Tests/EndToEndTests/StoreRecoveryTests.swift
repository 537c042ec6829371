import Foundation
import TestSupport
import Testing

/// What a store does with files its index does not explain, and with certificates whose
/// validity has not begun: nothing is deleted that may be the only copy, and nothing is stored
/// that APNs would refuse without the user saying so.
@Suite(.needsSecretService)
struct StoreRecoveryTests {
    typealias Store = StoreCommandTests.Store

    static func credentialFiles(_ store: Store) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials")) ?? [])
    }

    /// index.json put back from a backup taken before the last import: the newer credential's
    /// files are not the index's any more, yet they may be the only copy of its certificate.
    @Test func anOlderIndexPutBackLeavesNewerFilesAloneAndSaysSo() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let first = try TestPKI.mint(in: folder, name: "first", bundle: "com.example.first", days: 300)
        let second = try TestPKI.mint(in: folder, name: "second", bundle: "com.example.second", days: 300)
        let third = try TestPKI.mint(in: folder, name: "third", bundle: "com.example.third", days: 300)
        #expect(try store.run(["import", first, "--alias", "first"]).status == 0)
        let index = store.path + "/index.json"
        let backup = try Data(contentsOf: URL(fileURLWithPath: index))
        #expect(try store.run(["import", second, "--alias", "second"]).status == 0)
        let secondFiles = Self.credentialFiles(store).filter { $0.hasPrefix("second.") }
        try #require(!secondFiles.isEmpty)

        try backup.write(to: URL(fileURLWithPath: index))
        // A change of the store (another import) must not take the newer files as leftovers.
        try store.run(["import", third, "--alias", "third"]).succeeded()
        #expect(Self.credentialFiles(store).isSuperset(of: secondFiles))

        let unaccounted = secondFiles.map { store.path + "/credentials/" + $0 }.sorted()
        let checked = try store.run(["check", "--json"]).exited(1)
        let results = try #require(try checked.json()["credentials"] as? [[String: Any]])
        let reported = results.filter {
            (($0["findings"] as? [[String: Any]]) ?? []).contains { $0["code"] as? String == "unaccounted_file" }
        }
        #expect(reported.count == unaccounted.count, "\(checked.stdout)")
        let text = try store.run(["check"])
        for path in unaccounted { #expect(text.stdout.contains(path), "\(text.stdout)") }

        let listed = try store.run(["list", "--json"]).exited(1)
        #expect((try listed.json()["unaccounted_files"] as? [String])?.sorted() == unaccounted)
        try store.run(["list"]).exited(1, stdout: "no index entry names")

        // Importing the credential again takes its file back, and the store is whole.
        try store.run(["import", second, "--alias", "second"]).succeeded()
        #expect(try store.run(["list"]).status == 0)
        #expect(Self.credentialFiles(store).isSuperset(of: secondFiles))
    }

    /// A killed import leaves the files it journaled; the next change of the store removes
    /// exactly those, and nothing else it cannot account for.
    @Test func aKilledImportsFilesAreCleanedAndOnlyThose() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let first = try TestPKI.mint(in: folder, name: "one", bundle: "com.example.one", days: 300)
        let second = try TestPKI.mint(in: folder, name: "two", bundle: "com.example.two", days: 300)
        #expect(try store.run(["import", first, "--alias", "one"]).status == 0)
        // What an import killed between writing its files and its index leaves behind.
        let leftover = "ghost.0123456789ab.cert.pem"
        let stray = "stray.ba9876543210.cert.pem"
        for name in [leftover, stray] {
            try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(
                to: URL(fileURLWithPath: store.path + "/credentials/" + name)
            )
        }
        try Data("\(leftover)\n".utf8).write(to: URL(fileURLWithPath: store.path + "/.writing"))

        #expect(try store.run(["import", second, "--alias", "two"]).status == 0)
        let files = Self.credentialFiles(store)
        #expect(!files.contains(leftover))
        #expect(files.contains(stray))
        #expect(!FileManager.default.fileExists(atPath: store.path + "/.writing"))
        let listed = try store.run(["list", "--json"]).json()
        #expect(listed["unaccounted_files"] as? [String] == [store.path + "/credentials/" + stray])
    }

    @Test func aCertificateNotYetValidIsRefusedUnlessForced() throws {
        let store = try Store()
        let folder = try TemporaryFolder()
        let key = folder.path("later.key")
        let csr = try TestPKI.request(in: folder, name: "later", subject: "/CN=later", key: key)
        let start = Date().addingTimeInterval(10 * 86_400)
        let certificate = try TestPKI.issue(
            csr: csr,
            bundle: "com.example.later",
            in: folder,
            name: "later",
            validFrom: start
        )
        try store.run(["import", certificate, "--key", key]).exited(
            1,
            stderr: CredentialLifecycleTests.day(start),
            CredentialLifecycleTests.day(start + 395 * 86_400),
            "--force"
        )
        #expect(try store.listJSON().isEmpty)
        #expect(Self.credentialFiles(store).isEmpty)

        try store.run(["import", certificate, "--key", key, "--force"]).succeeded()
        let checked = try store.run(["check", "--json"]).exited(1)
        #expect(try CredentialLifecycleTests.codes(checked) == ["not_yet_valid"], "\(checked.stdout)")
    }
}
