import Foundation
import TestSupport
import Testing

@testable import PushVault

/// A store in Vault checks what it reads against its index, as a folder does, and tells a
/// reader's token that a change wants a writer's.
@Suite(
    "A store in Vault checked against its index",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer,
    .serialized,
    .timeLimit(.minutes(10))
)
struct VaultStoreIntegrityTests {
    typealias Bench = VaultStoreCommandTests.Bench

    @Test("A bundle swapped for another app's (same password) is refused as tampered by check and send")
    func swappedBundle() async throws {
        let bench = try await Bench(try server())
        try bench.importBoth()
        let kv = try bench.server.rootClient().kv()
        let folder = "\(bench.prefix)/files/credentials"
        let bundle = try #require(try await kv.list(folder).first { $0.hasPrefix("app.") && $0.hasSuffix(".p12") })
        let entry = try await kv.read("\(folder)/\(bundle)")
        // A writer puts another app's bundle, with the same password, in its place.
        let other = try Data(contentsOf: URL(fileURLWithPath: Fixtures.cert("p12/voip.p12")))
        try await kv.write("\(folder)/\(bundle)", data: ["value": other.base64EncodedString()], cas: entry.version)

        let checked = try bench.run(["check", "--json"], token: bench.reader)
        #expect(checked.status != 0, "\(checked.stdout)")
        #expect(checked.stdout.contains("secret_tampered"), "\(checked.stdout)\(checked.stderr)")
        #expect(checked.stdout.contains("refused as tampered"), "\(checked.stdout)")

        let log = bench.folder.path("gateway.jsonl")
        let gateway = try await RunningGateway.start(.sandbox) { $0.logFile = log }
        defer { Task { await gateway.stop() } }
        let sent = try bench.run(
            [
                "send", "app", "--environment", "sandbox", "--token", Fixtures.token.hex, "--alert", "hi",
                "--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile,
            ],
            token: bench.reader,
            server: true
        )
        #expect(sent.status != 0, "\(sent.stdout)\(sent.stderr)")
        #expect(sent.stderr.contains("tampered"), "\(sent.stderr)")
        #expect(sent.stderr.contains(bundle), "the message names the entry: \(sent.stderr)")
        let delivered = FileManager.default.fileExists(atPath: log) ? try await VaultStoreCommandTests.records(log) : []
        #expect(delivered.isEmpty, "nothing was sent with the swapped bundle")

        // The token key, untouched, still checks out.
        try bench.run(["check", "key"], token: bench.reader).succeeded()
    }

    @Test("A reader's import is told to use a writer's token, not to widen the reader's policy")
    func readOnlyHint() async throws {
        let bench = try await Bench(try server())
        let refused = try bench.run(
            ["import", VaultStoreCommandTests.p12, "--password-env", "P12_PASSWORD", "--alias", "app"],
            token: bench.reader,
            environment: ["P12_PASSWORD": VaultStoreCommandTests.password]
        ).exited(2, stderr: "may read the store", "writer's token", "docs/vault-policies/writer.hcl")
        #expect(!refused.stderr.contains("Add a policy"), "no advice to widen the reader's policy: \(refused.stderr)")
        #expect(refused.stderr.contains("secret/data/\(bench.prefix)/lock"), "\(refused.stderr)")
        let listed = try bench.run(["list", "--json"], token: bench.writer)
        #expect(!listed.stdout.contains("\"app\""), "nothing was imported: \(listed.stdout)")
    }
}
