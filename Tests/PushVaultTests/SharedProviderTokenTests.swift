import Crypto
import Foundation
import NIOConcurrencyHelpers
import PushCore
import Testing

@testable import PushVault

/// One provider token per key for a fleet, against a real OpenBao dev server.
@Suite(
    "Shared provider token",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer
)
struct SharedProviderTokenTests {
    /// A clock a test moves by hand.
    final class ManualClock: Sendable {
        let now = NIOLockedValueBox(Date(timeIntervalSince1970: 1_800_000_000))
        var clock: GatewayClock { GatewayClock { [self] in now.withLockedValue { $0 } } }
        func advance(minutes: Double) { now.withLockedValue { $0 += minutes * 60 } }
    }

    /// A key imported into Transit under a name of its own, and a KV prefix of its own.
    struct Fixture {
        let key = P256.Signing.PrivateKey()
        let keyID = "K" + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").uppercased().prefix(9))
        let teamID = "TEAM123456"
        let prefix = "fleet-\(UUID().uuidString.prefix(8))"
        let clock = ManualClock()

        init(server: BaoDevServer) async throws {
            try await server.enableTransit()
            try await server.rootClient().transit().importKey(name: Transit.keyName(for: keyID), privateKey: key)
        }

        /// One fleet instance: a client of its own (the root token's unless given), its warnings
        /// to `warn` (unheard unless given).
        func instance(
            _ server: BaoDevServer,
            client: VaultClient? = nil,
            warn: @escaping @Sendable (String) -> Void = { _ in }
        ) throws -> SharedProviderToken {
            let client = try client ?? server.rootClient()
            return try SharedProviderToken(
                kv: client.kv(),
                transit: client.transit(),
                keyID: keyID,
                teamID: teamID,
                prefix: prefix,
                clock: clock.clock,
                warn: warn
            )
        }

        func verify(_ token: SharedToken) throws {
            let parts = token.token.split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            let signatureBytes = try #require(Data(base64URLEncoded: parts[2]))
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
            #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
            let claimsBytes = try #require(Data(base64URLEncoded: parts[1]))
            let dictionary = try #require(try JSONSerialization.jsonObject(with: claimsBytes) as? [String: Any])
            #expect(dictionary["iss"] as? String == teamID)
            #expect(dictionary["iat"] as? Int == Int(token.issuedAt.timeIntervalSince1970))
            let headerBytes = try #require(Data(base64URLEncoded: parts[0]))
            let header = try #require(try JSONSerialization.jsonObject(with: headerBytes) as? [String: Any])
            #expect(header["alg"] as? String == "ES256")
            #expect(header["kid"] as? String == keyID)
        }
    }

    @Test("Two calls within the refresh age return the same token; one after it mints anew")
    func reuseWithinRefreshAge() async throws {
        let server = try server()
        let fixture = try await Fixture(server: server)
        let shared = try fixture.instance(server)
        let first = try await shared.token()
        #expect(first.minted)
        try fixture.verify(first)
        #expect(!first.description.contains(first.token))

        fixture.clock.advance(minutes: 39)
        let second = try await fixture.instance(server).token()
        #expect(!second.minted)
        #expect(second.token == first.token)
        #expect(second.version == first.version)

        fixture.clock.advance(minutes: 2)
        let third = try await shared.token()
        #expect(third.minted)
        #expect(third.token != first.token)
        #expect(third.version == first.version + 1)
        try fixture.verify(third)
    }

    @Test("Of 5 concurrent callers after expiry exactly one mints, and all use its token")
    func oneMinterOfFive() async throws {
        let server = try server()
        let fixture = try await Fixture(server: server)
        let first = try await fixture.instance(server).token()
        fixture.clock.advance(minutes: 45)
        let instances = try (0..<5).map { _ in try fixture.instance(server) }
        let tokens = try await withThrowingTaskGroup(of: SharedToken.self) { group in
            for instance in instances { group.addTask { try await instance.token() } }
            return try await group.reduce(into: [SharedToken]()) { $0.append($1) }
        }
        #expect(tokens.count == 5)
        #expect(tokens.filter(\.minted).count == 1)
        #expect(Set(tokens.map(\.token)).count == 1)
        #expect(tokens.first?.token != first.token)
        let kv = try server.rootClient().kv()
        let metadata = try await kv.metadata("\(fixture.prefix)/tokens/\(fixture.keyID)")
        #expect(metadata.currentVersion == first.version + 1)
        try fixture.verify(try #require(tokens.first))
    }

    @Test("Neither the Vault token nor the provider token appears in a thrown error")
    func noTokenInErrors() async throws {
        let server = try server()
        let fixture = try await Fixture(server: server)
        let minted = try await fixture.instance(server).token()
        // A token that may read the shared entry but neither write it nor sign.
        let readerToken = try await server.token(
            policy: "token-reader-\(fixture.prefix)",
            hcl: #"path "secret/data/\#(fixture.prefix)/*" { capabilities = ["read"] }"#
        )
        fixture.clock.advance(minutes: 41)
        let reader = try fixture.instance(server, client: try server.client(token: readerToken))
        let error = await #expect(throws: VaultError.self) { try await reader.token() }
        #expect(error?.code == .permissionDenied)
        #expect(error?.subject.path == "transit/sign/\(Transit.keyName(for: fixture.keyID))/sha2-256")
        #expect(error?.subject.capability == "update")
        let texts = [String(describing: error), String(reflecting: error), error?.message ?? "", error?.hint ?? ""]
        for text in texts {
            #expect(!text.contains(readerToken))
            #expect(!text.contains(minted.token))
            #expect(!text.contains(String(minted.token.split(separator: ".")[2])))
        }
    }
}
