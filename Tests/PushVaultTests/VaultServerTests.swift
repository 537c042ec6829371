import Crypto
import Foundation
import PushCore
import TestSupport
import Testing

@testable import PushVault

/// KV version 2, Transit, policies and login against one real OpenBao dev server.
@Suite(
    "PushVault against an OpenBao dev server",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer
)
struct VaultServerTests {
    /// A fresh path prefix per test: the tests share the server and run in parallel.
    let prefix = "test-\(UUID().uuidString.prefix(8))"

    @Test("KV: write, read, metadata, list, update with cas, delete, destroy")
    func kvRoundTrip() async throws {
        let kv = try server().rootClient().kv()
        let path = "\(prefix)/credentials/prod"
        let first = try await kv.write(path, data: ["p12": "AAEC", "alias": "prod"], cas: 0)
        #expect(first == 1)
        let read = try await kv.read(path)
        #expect(read.data == ["p12": "AAEC", "alias": "prod"])
        #expect(read.version == 1)
        #expect(!read.description.contains("AAEC"))
        let second = try await kv.write(path, data: ["p12": "AwQF", "alias": "prod"], cas: 1)
        #expect(second == 2)
        let metadata = try await kv.metadata(path)
        #expect(metadata.currentVersion == 2)
        #expect(Set(metadata.versions.keys) == [1, 2])
        #expect(try await kv.list("\(prefix)/credentials") == ["prod"])
        #expect(try await kv.list(prefix) == ["credentials/"])
        #expect(try await kv.list("\(prefix)/nothing-here").isEmpty)
        #expect(try await kv.read(path, version: 1).data["p12"] == "AAEC")
        try await kv.writeCustomMetadata(path, ["kind": "certificate", "not_after": "2027-01-01T00:00:00Z"])
        #expect(try await kv.metadata(path).customMetadata["kind"] == "certificate")

        let stale = await #expect(throws: VaultError.self) { try await kv.write(path, data: ["p12": "x"], cas: 1) }
        #expect(stale?.code == .casMismatch)

        try await kv.delete(path)
        #expect(try await kv.readIfPresent(path) == nil)
        let missing = await #expect(throws: VaultError.self) { try await kv.read(path) }
        #expect(missing?.code == .notFound)
        #expect(try await kv.metadata(path).versions[2]?.deletionTime != nil)
        try await kv.destroy(path, versions: [1])
        #expect(try await kv.metadata(path).versions[1]?.destroyed == true)
        try await kv.destroyAll(path)
        let gone = await #expect(throws: VaultError.self) { try await kv.metadata(path) }
        #expect(gone?.code == .notFound)
    }

    @Test("KV: of two concurrent create-only writes one wins, the other gets casMismatch")
    func concurrentCreateOnly() async throws {
        let server = try server()
        let path = "\(prefix)/race"
        let first = try server.rootClient().kv()
        let second = try server.rootClient().kv()
        async let a: Result<Int, VaultError> = capture { try await first.write(path, data: ["writer": "a"], cas: 0) }
        async let b: Result<Int, VaultError> = capture { try await second.write(path, data: ["writer": "b"], cas: 0) }
        let results = await [a, b]
        let wins = results.compactMap { try? $0.get() }
        let losses = results.compactMap { result -> VaultError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(wins == [1])
        #expect(losses.map(\.code) == [.casMismatch])
        #expect(losses.first?.message.contains("check-and-set parameter did not match") == true)
        let stored = try await first.read(path).data["writer"]
        let winner = (try? results[0].get()) != nil ? "a" : "b"
        #expect(stored == winner)
    }

    @Test("KV: a version 1 mount is detected and named")
    func kvVersion1() async throws {
        let server = try server()
        let mount = "kv1-\(UUID().uuidString.prefix(8))"
        try await server.admin(.POST, "sys/mounts/\(mount)", ["type": "kv", "options": ["version": "1"]])
        let kv = try server.rootClient().kv(mount: mount)
        let error = await #expect(throws: VaultError.self) { try await kv.write("a", data: ["x": "y"], cas: 0) }
        #expect(error?.code == .kvVersion1)
        #expect(error?.message.contains("\(mount)/") == true)
        let checked = await #expect(throws: VaultError.self) { try await kv.checkVersion() }
        #expect(checked?.code == .kvVersion1)
    }

    @Test("Transit: a P-256 key imported BYOK is not exportable and its JWS signatures verify")
    func transitImportAndSign() async throws {
        let server = try server()
        try await server.enableTransit()
        let transit = try server.rootClient().transit()
        let key = P256.Signing.PrivateKey()
        let name = "apns-\(prefix)"
        try await transit.importKey(name: name, privateKey: key)

        let info = try await transit.keyInfo(name: name)
        #expect(info.type == "ecdsa-p256")
        #expect(info.exportable == false)
        #expect(info.importedKey == true)
        #expect(info.latestVersion == 1)
        let publicPEM = try #require(info.publicKeys[1])
        let imported = try P256.Signing.PublicKey(pemRepresentation: publicPEM)
        #expect(imported.derRepresentation == key.publicKey.derRepresentation)

        // The flag is read, not assumed: a key Transit made exportable says so.
        try await server.admin(.POST, "transit/keys/exportable-\(prefix)", ["type": "ecdsa-p256", "exportable": true])
        #expect(try await transit.keyInfo(name: "exportable-\(prefix)").exportable == true)

        let message = Array("header.claims".utf8)
        let (raw, version) = try await transit.sign(name: name, message: message)
        #expect(raw.count == 64)
        #expect(version == 1)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
        #expect(key.publicKey.isValidSignature(signature, for: message))

        // The provider token Transit signs is the one the key itself would make.
        let issuedAt = Date(timeIntervalSince1970: 1_800_000_000)
        let jwt = try await transit.makeProviderToken(
            name: name,
            keyID: "ABC123DEFG",
            teamID: "TEAM123456",
            issuedAt: issuedAt
        )
        let local = try ProviderKey(keyID: "ABC123DEFG", teamID: "TEAM123456", privateKey: key).makeJWT(
            issuedAt: issuedAt
        )
        let parts = jwt.split(separator: ".")
        #expect(parts.count == 3)
        #expect(parts.prefix(2) == local.split(separator: ".").prefix(2))
        let jwtSignatureBytes = try #require(Data(base64URLEncoded: String(parts[2])))
        let jwtSignature = try P256.Signing.ECDSASignature(rawRepresentation: jwtSignatureBytes)
        #expect(key.publicKey.isValidSignature(jwtSignature, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    @Test("Transit: a mount with no engine is named as such")
    func transitNotMounted() async throws {
        let transit = try server().rootClient().transit(mount: "no-transit-\(prefix)")
        let error = await #expect(throws: VaultError.self) { try await transit.wrappingKeyPEM() }
        #expect(error?.code == .transitNotMounted)
    }

    @Test("A reader's token is denied writes and lists, naming the path and the capability")
    func permissionDenied() async throws {
        let server = try server()
        let token = try await server.token(
            policy: "reader-\(prefix)",
            hcl: #"path "secret/data/\#(prefix)/*" { capabilities = ["read"] }"#
        )
        try await server.rootClient().kv().write("\(prefix)/cred", data: ["a": "b"])
        let kv = try server.client(token: token).kv()
        #expect(try await kv.read("\(prefix)/cred").data == ["a": "b"])

        let create = await #expect(throws: VaultError.self) {
            try await kv.write("\(prefix)/new", data: ["a": "b"], cas: 0)
        }
        #expect(create?.code == .permissionDenied)
        #expect(create?.subject.path == "secret/data/\(prefix)/new")
        #expect(create?.subject.capability == "create")
        let update = await #expect(throws: VaultError.self) {
            try await kv.write("\(prefix)/cred", data: ["a": "c"], cas: 1)
        }
        #expect(update?.subject.capability == "update")
        let list = await #expect(throws: VaultError.self) { try await kv.list(prefix) }
        #expect(list?.code == .permissionDenied)
        #expect(list?.subject.path == "secret/metadata/\(prefix)")
        #expect(list?.subject.capability == "list")
        for error in [create, update, list].compactMap({ $0 }) {
            #expect(!"\(error)".contains(token))
            #expect(!String(reflecting: error).contains(token))
        }
    }

    @Test("A token that is unknown, revoked or absent is told apart from a denied capability")
    func tokenInvalidAndMissing() async throws {
        let server = try server()
        let bogus = "s.NotARealTokenAtAll1234"
        let invalid = await #expect(throws: VaultError.self) {
            try await server.client(token: bogus).kv().read("\(prefix)/x")
        }
        #expect(invalid?.code == .tokenInvalid)
        #expect(!"\(String(describing: invalid))".contains(bogus))

        let revoked = try await server.token(
            policy: "revoked-\(prefix)",
            hcl: #"path "secret/*" { capabilities = ["read"] }"#
        )
        try await server.admin(.POST, "auth/token/revoke", ["token": revoked])
        let afterRevoke = await #expect(throws: VaultError.self) {
            try await server.client(token: revoked).kv().read("\(prefix)/x")
        }
        #expect(afterRevoke?.code == .tokenInvalid)

        let home = server.folder.appendingPathComponent("empty-home-\(prefix)")
        let missing = await #expect(throws: VaultError.self) {
            try await server.client(token: nil, environment: ["HOME": home.path]).kv().read("\(prefix)/x")
        }
        #expect(missing?.code == .tokenMissing)
    }

    @Test("The token is read from VAULT_TOKEN_FILE and ~/.vault-token, and AppRole logs in")
    func tokenSources() async throws {
        let server = try server()
        try await server.rootClient().kv().write("\(prefix)/cred", data: ["a": "b"])
        let home = server.folder.appendingPathComponent("home-\(prefix)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try "ROOT\n".write(to: home.appendingPathComponent(".vault-token"), atomically: true, encoding: .utf8)
        let helper = try server.client(token: nil, environment: ["HOME": home.path])
        #expect(try await helper.kv().read("\(prefix)/cred").data == ["a": "b"])

        let sink = home.appendingPathComponent("agent-sink").path
        try "ROOT".write(toFile: sink, atomically: true, encoding: .utf8)
        let agent = try server.client(token: nil, environment: ["VAULT_TOKEN_FILE": sink])
        #expect(try await agent.kv().read("\(prefix)/cred").data == ["a": "b"])

        let mount = "approle-\(prefix)"
        try await server.admin(.POST, "sys/auth/\(mount)", ["type": "approle"])
        try await server.admin(
            .POST,
            "sys/policies/acl/role-\(prefix)",
            ["policy": #"path "secret/data/\#(prefix)/*" { capabilities = ["read"] }"#]
        )
        try await server.admin(.POST, "auth/\(mount)/role/fleet", ["token_policies": ["role-\(prefix)"]])
        let roleAnswer = try await server.admin(.GET, "auth/\(mount)/role/fleet/role-id")
        let roleID = try #require(roleAnswer["data"]["role_id"].string)
        let secretAnswer = try await server.admin(.POST, "auth/\(mount)/role/fleet/secret-id")
        let secretID = try #require(secretAnswer["data"]["secret_id"].string)
        let secretFile = home.appendingPathComponent("secret-id").path
        try secretID.write(toFile: secretFile, atomically: true, encoding: .utf8)
        let environment = ["VAULT_ROLE_ID": roleID, "VAULT_SECRET_ID_FILE": secretFile, "VAULT_APPROLE_MOUNT": mount]
        let appRole = try server.client(token: nil, environment: environment)
        #expect(try await appRole.kv().read("\(prefix)/cred").data == ["a": "b"])

        var wrong = environment
        wrong["VAULT_SECRET_ID_FILE"] = nil
        wrong["VAULT_SECRET_ID"] = "not-the-secret-id"
        let refused = await #expect(throws: VaultError.self) {
            try await server.client(token: nil, environment: wrong).kv().read("\(prefix)/cred")
        }
        #expect(refused?.code == .loginFailed)
        #expect(!"\(String(describing: refused))".contains(secretID))
    }

    @Test("A token from AppRole login that expires is replaced by logging in again")
    func appRoleRelogin() async throws {
        let server = try server()
        try await server.rootClient().kv().write("\(prefix)/cred", data: ["a": "b"])
        let mount = "approle-short-\(prefix)"
        try await server.admin(.POST, "sys/auth/\(mount)", ["type": "approle"])
        try await server.admin(
            .POST,
            "sys/policies/acl/short-\(prefix)",
            ["policy": #"path "secret/data/\#(prefix)/*" { capabilities = ["read"] }"#]
        )
        try await server.admin(
            .POST,
            "auth/\(mount)/role/short",
            ["token_policies": ["short-\(prefix)"], "token_ttl": "2s", "token_max_ttl": "2s"]
        )
        let roleAnswer = try await server.admin(.GET, "auth/\(mount)/role/short/role-id")
        let secretAnswer = try await server.admin(.POST, "auth/\(mount)/role/short/secret-id")
        let environment = [
            "VAULT_ROLE_ID": try #require(roleAnswer["data"]["role_id"].string),
            "VAULT_SECRET_ID": try #require(secretAnswer["data"]["secret_id"].string),
            "VAULT_APPROLE_MOUNT": mount,
        ]
        let client = try server.client(token: nil, environment: environment)
        #expect(try await client.kv().read("\(prefix)/cred").data == ["a": "b"])
        // On a loaded machine the 2 s token may already have run out within that first read:
        // what counts is that the client logged in, and logs in again once the token it has ends.
        let first = client.logins.withLockedValue { $0 }
        #expect(first >= 1)
        // Read until the token has run out and the client has logged in again: the event, however
        // long a loaded machine takes to reach it. Every read on the way is answered.
        try await eventually {
            let data = try await client.kv().read("\(prefix)/cred").data
            #expect(data == ["a": "b"])
            return client.logins.withLockedValue { $0 } > first
        }
    }
}

/// A throwing call's outcome as a value.
func capture<T: Sendable>(_ body: () async throws -> T) async -> Result<T, VaultError> {
    do {
        return .success(try await body())
    } catch let error as VaultError {
        return .failure(error)
    } catch {
        return .failure(.badResponse(address: "test", path: nil, reason: "\(error)"))
    }
}
