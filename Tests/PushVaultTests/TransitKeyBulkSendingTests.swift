import Foundation
import LocalGateway
import PushBulk
import PushCore
import PushGateway
import Testing

@testable import PushVault

/// A bulk run (`send --tokens`) with a key held in Transit whose shared token APNs refuses:
/// the token is replaced once and the refused lines sent again.
extension TransitKeySendingTests {
    struct Observer: BulkSendObserver {
        func willSend(_ started: BulkSendJob.Started) {}
        func didEnd() {}
    }

    /// Sends one notification to `count` tokens over one connection, with a fleet instance's
    /// shared token; the summary and the results file's result lines.
    func bulkSend(
        _ fixture: SharedProviderTokenTests.Fixture,
        server: BaoDevServer,
        port: Int,
        ca: String,
        count: Int
    ) async throws -> (BulkSummary, [[String: Any]]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bulk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokens = folder.appendingPathComponent("tokens.txt").path
        let lines = (0..<count).map { index in
            (0..<32).map { String(format: "%02x", UInt8(truncatingIfNeeded: index &* 7 &+ $0)) }.joined()
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: tokens, atomically: true, encoding: .utf8)
        let results = folder.appendingPathComponent("results.jsonl").path
        var configuration = GatewayConfiguration(
            endpoint: .custom(host: "127.0.0.1", port: port),
            credential: .remoteToken(RemoteProviderKey(source: try fixture.instance(server)))
        )
        configuration.caFiles = [ca]
        configuration.clock = fixture.clock.clock
        configuration.timeouts.tls = 60
        let template = NotificationTemplate(
            topic: "com.example.app",
            pushType: .alert,
            payload: Array(#"{"aps":{"alert":"from a key in Transit"}}"#.utf8)
        )
        let outcome = try await BulkSendJob.run(
            .init(configuration: configuration, template: template, tokens: tokens, results: results),
            observer: Observer()
        )
        let written = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (outcome.summary, written.filter { $0["line"] != nil })
    }

    @Test("A bulk run replaces a shared token APNs refuses, once, and sends the refused lines again")
    func bulkRunReplacesARefusedSharedToken() async throws {
        let server = try server()
        let fixture = try await SharedProviderTokenTests.Fixture(server: server)
        // The shared entry holds a token issued 59 s ahead of the fleet's clock (the fleet
        // accepts up to a minute ahead) while APNs' clock is 3,570 s behind: it is refused as
        // issued more than an hour ahead, and a token minted now is not.
        fixture.clock.advance(minutes: 59.0 / 60)
        let planted = try await fixture.instance(server).token()
        fixture.clock.advance(minutes: -59.0 / 60)
        let (gateway, port, ca, log) = try await gateway(for: fixture, lag: 3_570)
        defer { Task { try? await gateway.stop() } }

        let (summary, results) = try await bulkSend(fixture, server: server, port: port, ca: ca, count: 3)
        #expect(summary.stoppedBy == nil, "\(summary.stopMessage ?? "")")
        #expect(summary.accepted == 3)
        #expect(summary.uncertain == 0, "a 403 was not delivered: sending again is not uncertain")
        #expect(results.count == 3)
        #expect(results.allSatisfy { ($0["status"] as? Int) == 200 && ($0["uncertain"] as? Bool) != true })
        #expect(results.contains { ($0["attempts"] as? Int) == 2 }, "the refused line was sent again: \(results)")
        let entry = try await server.rootClient().kv().read("\(fixture.prefix)/tokens/\(fixture.keyID)")
        #expect(entry.version == planted.version + 1, "one new token for the run, not one per line")
        let delivered = try Self.issuedAts(in: log)
        #expect(delivered.count == 3)
        #expect(!delivered.contains(Int(planted.issuedAt.timeIntervalSince1970)), "the refused token delivered nothing")
    }

    @Test("A bulk run whose new token is refused too stops, leaving every line for a resume")
    func bulkRunStopsWhenTheNewTokenIsRefused() async throws {
        let server = try server()
        let fixture = try await SharedProviderTokenTests.Fixture(server: server)
        // The gateway knows the key under another team: every token is refused.
        let (gateway, port, ca, log) = try await gateway(for: fixture, teamID: "OTHER12345")
        defer { Task { try? await gateway.stop() } }

        let (summary, results) = try await bulkSend(fixture, server: server, port: port, ca: ca, count: 3)
        #expect(summary.stoppedBy == .credentialRejected)
        #expect(summary.stopReason == "InvalidProviderToken")
        #expect(results.isEmpty, "no line is final, so a resume sends them all: \(results)")
        #expect(summary.accepted == 0)
        let entry = try await server.rootClient().kv().read("\(fixture.prefix)/tokens/\(fixture.keyID)")
        #expect(entry.version == 2, "the first token, refused, then one new one: not a loop")
        let delivered = FileManager.default.fileExists(atPath: log) ? try Self.issuedAts(in: log) : []
        #expect(delivered.isEmpty)
    }
}
