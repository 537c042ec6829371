import CredentialFormats
import Crypto
import Foundation
import LocalGateway
import PushCore
import PushGateway
import PushStore
import PushVault
import PushVaultStore
import Testing

/// A store whose secrets are in Vault: a token key goes into Transit, is loaded as a key that
/// signs there, sends through a real connection, and cannot be exported.
@Suite(
    "A store's secrets in Vault",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer,
    .timeLimit(.minutes(2))
)
struct VaultSecretStoreTests {
    @Test("A .p8 imported into a Vault-backed store lives in Transit only and sends from there")
    func tokenKeyInTransit() async throws {
        let server = try server()
        try await server.enableTransit()
        let client = try server.rootClient()
        let prefix = "store-\(UUID().uuidString.prefix(8))"
        let secrets = VaultSecretStore(client: client, prefix: prefix)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vault-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = CredentialStore(root: folder.appendingPathComponent("store"), secrets: secrets)

        let key = P256.Signing.PrivateKey()
        let keyID = "K" + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").uppercased().prefix(9))
        let p8 = folder.appendingPathComponent("AuthKey_\(keyID).p8").path
        try key.pemRepresentation.write(toFile: p8, atomically: true, encoding: .utf8)

        let imported = try await store.importTokenKey(
            path: p8,
            teamID: "TEAM123456",
            topics: ["com.example.app"],
            environments: [.sandbox, .production],
            alias: "fleet-key"
        )
        #expect(imported.credential.keyID == keyID)

        // In Transit, not exportable; nothing of the key in KV.
        let info = try await client.transit().keyInfo(name: Transit.keyName(for: keyID))
        #expect(!info.exportable)
        #expect(info.importedKey)
        let entries = (try? await client.kv().list(prefix + "/secrets")) ?? []
        #expect(entries.isEmpty, "no token key bytes in KV: \(entries)")

        // Loaded from the store, it is a key held elsewhere; exporting it is refused.
        let loaded = try await CredentialLoader(store: store).load("fleet-key")
        #expect(loaded.tokenKey == nil)
        let remote = try #require(loaded.remoteTokenKey)
        #expect(remote.publicKeyDER == [UInt8](key.publicKey.derRepresentation))
        let refusal = await #expect(throws: CredentialError.self) {
            try await store.export(named: "fleet-key", as: .pem)
        }
        #expect(refusal?.code == .notExportable)
        #expect(refusal?.message.contains("never leaves") == true)

        // Sent with: the local gateway verifies Transit's signature against the .p8's public key.
        var gatewayConfiguration = LocalGateway.Configuration(environment: .sandbox)
        gatewayConfiguration.handshakeTimeout = 60
        gatewayConfiguration.tokenKeys = [
            .init(
                keyID: keyID,
                teamID: "TEAM123456",
                publicKeyPEM: key.publicKey.pemRepresentation,
                environment: nil,
                topics: []
            )
        ]
        let gateway = try LocalGateway(configuration: gatewayConfiguration)
        let port = try await gateway.start()
        defer { Task { try? await gateway.stop() } }
        let ca = folder.appendingPathComponent("ca.pem").path
        try (gateway.serverCertificateAuthorityPEM ?? "").write(toFile: ca, atomically: true, encoding: .utf8)
        var configuration = GatewayConfiguration(
            endpoint: .custom(host: "127.0.0.1", port: port),
            credential: loaded.client
        )
        configuration.caFiles = [ca]
        configuration.timeouts.tls = 60
        let connection = try await GatewayConnection.connect(configuration)
        let response = try await connection.send(
            PushNotification(
                deviceToken: try DeviceToken("740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"),
                topic: "com.example.app",
                payload: try Payload.alert(title: nil, body: "from the store's key in Transit")
            )
        )
        await connection.close()
        #expect(response.status == 200, "\(response.reason?.rawValue ?? "")")
    }

    @Test("A certificate's private key is a KV entry, read back to load the identity")
    func privateKeyInKV() async throws {
        let server = try server()
        let client = try server.rootClient()
        let secrets = VaultSecretStore(client: client, prefix: "pk-\(UUID().uuidString.prefix(8))")
        let item = SecretItem(store: "/tmp/a-store", alias: "app", kind: .privateKey, identifier: "ab12")
        let secret = SecretBytes(Array("PKCS8-bytes-for-the-test".utf8))
        try await secrets.store(secret, for: item)
        #expect(try await secrets.lookup(item)?.withUnsafeBytes { Array($0) } == Array("PKCS8-bytes-for-the-test".utf8))
        #expect(try await secrets.items(store: "/tmp/a-store").map(\.alias) == ["app"])
        #expect(secrets.placeOf(item).contains("Vault at \(client.address)"))
        #expect(try await secrets.remove(item))
        #expect(try await secrets.lookup(item) == nil)
    }
}
