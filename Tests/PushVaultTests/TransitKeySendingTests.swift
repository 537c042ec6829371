import Crypto
import Foundation
import LocalGateway
import PushCore
import PushGateway
import TestSupport
import Testing

@testable import PushVault

/// A token key that lives only in Transit sends through a real connection: the local gateway
/// verifies each ES256 token against the key's public key, and the fleet's processes present
/// one token per refresh period.
@Suite(
    "Sending with a key held in Transit",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer,
    .timeLimit(.minutes(2))
)
struct TransitKeySendingTests {
    static let deviceToken = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"

    /// A local gateway that knows only the key's public half, logging every delivery.
    /// With `teamID`, the gateway knows the key under another team and answers every token
    /// InvalidProviderToken. With `lag`, the gateway's clock is that many seconds behind the
    /// fleet's (a token issued more than an hour ahead of it is refused as InvalidProviderToken).
    func gateway(
        for fixture: SharedProviderTokenTests.Fixture,
        teamID: String? = nil,
        lag: TimeInterval = 0
    ) async throws -> (LocalGateway, Int, String, String) {
        let log = try Fixtures.temporaryPath("deliveries.jsonl")
        // The fleet's clock and APNs' agree (unless lagging): the test moves both.
        let fleet = fixture.clock.clock
        let running = try await RunningGateway.start(.sandbox) { configuration in
            configuration.clientCAFiles = []
            configuration.clock = lag == 0 ? fleet : GatewayClock { fleet.now().addingTimeInterval(-lag) }
            configuration.tokenKeys = [
                .init(
                    keyID: fixture.keyID,
                    teamID: teamID ?? fixture.teamID,
                    publicKeyPEM: fixture.key.publicKey.pemRepresentation,
                    environment: nil,
                    topics: []
                )
            ]
            configuration.logFile = log
        }
        return (running.gateway, running.port, running.caFile, log)
    }

    /// One process of the fleet (`source`, by default one with a Vault client of its own): one
    /// connection, one notification.
    func send(
        _ fixture: SharedProviderTokenTests.Fixture,
        server: BaoDevServer,
        port: Int,
        ca: String,
        source: SharedProviderToken? = nil
    ) async throws -> PushResponse {
        let source = try source ?? fixture.instance(server)
        var configuration = GatewayConfiguration(
            endpoint: .custom(host: "127.0.0.1", port: port),
            credential: .remoteToken(RemoteProviderKey(source: source))
        )
        configuration.caFiles = [ca]
        configuration.clock = fixture.clock.clock
        configuration.timeouts.tls = 60
        let connection = try await GatewayConnection.connect(configuration)
        let notification = PushNotification(
            deviceToken: try DeviceToken(Self.deviceToken),
            topic: "com.example.app",
            payload: try Payload.alert(title: nil, body: "from a key in Transit")
        )
        let response = try await connection.send(notification)
        await connection.close()
        return response
    }

    static func issuedAts(in log: String) throws -> [Int] {
        try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (record?["token_iat"] as? NSNumber)?.intValue
        }
    }

    @Test("The gateway verifies Transit's signature; two processes present the same token")
    func sendsAndShares() async throws {
        let server = try server()
        let fixture = try await SharedProviderTokenTests.Fixture(server: server)
        let (gateway, port, ca, log) = try await gateway(for: fixture)
        defer { Task { try? await gateway.stop() } }

        let first = try await send(fixture, server: server, port: port, ca: ca)
        #expect(first.status == 200, "\(first.reason?.rawValue ?? "")")
        fixture.clock.advance(minutes: 19)
        let second = try await send(fixture, server: server, port: port, ca: ca)
        #expect(second.status == 200)
        let issued = try Self.issuedAts(in: log)
        #expect(issued.count == 2)
        #expect(Set(issued).count == 1, "both processes presented the token of \(issued)")

        // Past the refresh age, five processes at once: one token is minted and all present it.
        fixture.clock.advance(minutes: 25)
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<5 { group.addTask { try await send(fixture, server: server, port: port, ca: ca).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(answers == [200, 200, 200, 200, 200])
        let after = try Self.issuedAts(in: log)
        #expect(after.count == 7)
        #expect(Set(after.dropFirst(2)).count == 1)
        #expect(after.last != issued.first)
        let kv = try server.rootClient().kv()
        let metadata = try await kv.metadata("\(fixture.prefix)/tokens/\(fixture.keyID)")
        #expect(metadata.currentVersion == 2, "one token per refresh period: two versions in all")
    }

    @Test("A process keeps presenting its token while its entry is overwritten every minute, forged or validly signed")
    func churnedEntryIsNotFollowed() async throws {
        let server = try server()
        let fixture = try await SharedProviderTokenTests.Fixture(server: server)
        let (gateway, port, ca, log) = try await gateway(for: fixture)
        defer { Task { try? await gateway.stop() } }
        let kv = try server.rootClient().kv()
        let path = "\(fixture.prefix)/tokens/\(fixture.keyID)"
        let process = try fixture.instance(server)
        #expect(try await send(fixture, server: server, port: port, ca: ca, source: process).status == 200)
        for minute in 1...4 {
            fixture.clock.advance(minutes: 1)
            let now = fixture.clock.now.withLockedValue { $0 }
            let planted =
                minute.isMultiple(of: 2)
                ? try await SharedTokenVerificationTests.transitToken(fixture, server, issuedAt: now)
                : try #require(try SharedTokenVerificationTests.bad(fixture).first { $0.name == "forged" }).data
            try await kv.write(path, data: planted, cas: try await kv.latest(path).version)
            // Each send opens a new connection, which asks the process for its token.
            #expect(try await send(fixture, server: server, port: port, ca: ca, source: process).status == 200)
        }
        let issued = try Self.issuedAts(in: log)
        #expect(issued.count == 5)
        #expect(Set(issued).count == 1, "one token presented throughout: \(issued)")
        // The last planted entry is valid: left as it is; a newcomer presents that one.
        #expect(try await send(fixture, server: server, port: port, ca: ca).status == 200)
        #expect(try Self.issuedAts(in: log).last == (issued.first ?? 0) + 4 * 60)
    }

    @Test("A shared token entry deleted, destroyed or removed whole is written again, and sends go on")
    func deletedEntry() async throws {
        let server = try server()
        let fixture = try await SharedProviderTokenTests.Fixture(server: server)
        let (gateway, port, ca, _) = try await gateway(for: fixture)
        defer { Task { try? await gateway.stop() } }
        let kv = try server.rootClient().kv()
        let path = "\(fixture.prefix)/tokens/\(fixture.keyID)"
        #expect(try await send(fixture, server: server, port: port, ca: ca).status == 200)
        try await kv.delete(path)
        #expect(try await send(fixture, server: server, port: port, ca: ca).status == 200)
        #expect(try await kv.read(path).version == 2, "the deleted version 1 replaced")
        try await kv.destroy(path, versions: [2])
        #expect(try await send(fixture, server: server, port: port, ca: ca).status == 200)
        try await kv.destroyAll(path)
        #expect(try await send(fixture, server: server, port: port, ca: ca).status == 200)
        #expect(try await kv.read(path).version == 1)
    }

    @Test("InvalidProviderToken to a shared token drops it and mints a new one, once")
    func invalidProviderTokenMintsOnce() async throws {
        let server = try server()
        let fixture = try await SharedProviderTokenTests.Fixture(server: server)
        // The gateway knows the key under another team: it refuses every token, as APNs does a
        // token it cannot verify.
        let (gateway, port, ca, _) = try await gateway(for: fixture, teamID: "OTHER12345")
        defer { Task { try? await gateway.stop() } }
        let kv = try server.rootClient().kv()
        let path = "\(fixture.prefix)/tokens/\(fixture.keyID)"
        let response = try await send(fixture, server: server, port: port, ca: ca)
        #expect(response.status == 403)
        #expect(response.reason == .invalidProviderToken)
        let entry = try await kv.read(path)
        #expect(entry.version == 2, "the first token minted, refused, then one new one: not a loop")

        // A token APNs accepts is not dropped: the shared token stays at its version.
        let (good, goodPort, goodCA, _) = try await self.gateway(for: fixture)
        defer { Task { try? await good.stop() } }
        #expect(try await send(fixture, server: server, port: goodPort, ca: goodCA).status == 200)
        #expect(try await kv.read(path).version == 2)
    }

    @Test("A key whose store refuses the signature stops before anything is sent, saying why")
    func refusedSignature() async throws {
        let server = try server()
        let fixture = try await SharedProviderTokenTests.Fixture(server: server)
        let (gateway, port, ca, log) = try await gateway(for: fixture)
        defer { Task { try? await gateway.stop() } }
        let readerToken = try await server.token(
            policy: "reader-\(fixture.prefix)",
            hcl: #"path "secret/data/\#(fixture.prefix)/*" { capabilities = ["read"] }"#
        )
        let source = try fixture.instance(server, client: try server.client(token: readerToken))
        var configuration = GatewayConfiguration(
            endpoint: .custom(host: "127.0.0.1", port: port),
            credential: .remoteToken(RemoteProviderKey(source: source))
        )
        configuration.caFiles = [ca]
        let connection = try await GatewayConnection.connect(configuration)
        let error = await #expect(throws: GatewayError.self) {
            try await connection.send(
                PushNotification(
                    deviceToken: try DeviceToken(Self.deviceToken),
                    topic: "com.example.app",
                    payload: try Payload.alert(title: nil, body: "x")
                )
            )
        }
        await connection.close()
        #expect(error?.code == .invalidCredential)
        #expect(error?.message.contains(fixture.keyID) == true)
        #expect(error?.message.contains("update") == true || error?.hint?.contains("update") == true)
        #expect(!(error?.description.contains(readerToken) ?? true))
        let delivered = FileManager.default.fileExists(atPath: log) ? try Self.issuedAts(in: log) : []
        #expect(delivered.isEmpty, "nothing was sent without a token")
    }
}
