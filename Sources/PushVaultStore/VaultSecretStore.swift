import CredentialFormats
import Crypto
import Foundation
import PushCore
import PushStore
import PushVault

/// A store's secrets in HashiCorp Vault or OpenBao: a PKCS#12 password or a PEM private key is
/// a KV version 2 entry, written with check-and-set; a token key (.p8) is imported into
/// Transit, not exportable, and never read back: it signs there, and the fleet shares its
/// provider token (``SharedProviderToken``).
///
/// Layout under the KV mount: `PREFIX/secrets/STORE/ALIAS/KIND/IDENTIFIER`, one field `value`
/// (base64 of the secret), where STORE is a short hash of the store's identity (so that two
/// stores can share a prefix) and IDENTIFIER the certificate's SHA-256 or the request key's
/// fingerprint: a rotation writes its new secret beside the old one, and settling the change
/// removes the old one only. A removed secret is deleted as `vault kv delete` deletes (its
/// versions stay until an operator destroys them). Token keys are `TRANSIT/keys/apns-KEYID`.
///
/// Each call awaits Vault's answer over NIO's HTTP client, holding no thread while it waits,
/// and Vault's errors reach the caller as ``ReportedVaultError``.
public struct VaultSecretStore: SecretStore {
    public let client: VaultClient
    public let kv: KVv2
    public let transit: Transit
    public let prefix: String

    public init(
        client: VaultClient,
        kvMount: String = "secret",
        prefix: String = "apnsctl",
        transitMount: String = "transit"
    ) {
        self.client = client
        kv = client.kv(mount: kvMount)
        transit = client.transit(mount: transitMount)
        self.prefix = KVv2.trim(prefix)
    }

    func path(of item: SecretItem) -> String {
        let store = SHA256.hash(data: Data(item.store.utf8)).prefix(6).map { String(format: "%02x", $0) }.joined()
        return "\(prefix)/secrets/\(store)/\(item.alias)/\(item.kind.rawValue)/\(item.identifier)"
    }

    public func store(_ secret: SecretBytes, for item: SecretItem) async throws {
        if item.kind == .tokenKey {
            let key = try secret.withUnsafeBytes { try P256.Signing.PrivateKey(derRepresentation: Array($0)) }
            let name = Transit.keyName(for: item.identifier)
            let transit = self.transit
            let publicKey = key.publicKey.derRepresentation
            let held = try await Self.request { () -> Bool? in
                guard let info = try? await transit.keyInfo(name: name) else { return nil }
                let latest = info.publicKeys[info.latestVersion].flatMap {
                    try? P256.Signing.PublicKey(pemRepresentation: $0)
                }
                return latest?.derRepresentation == publicKey
            }
            switch held {
            case true?:
                // Imported before (a copy run again, a key removed and imported again): the same
                // key, which Transit keeps until an operator deletes it.
                return
            case false?:
                throw CredentialError(
                    .storeError,
                    path: "\(transit.mount)/keys/\(name)",
                    "Vault's Transit at \(client.address) already holds another key named \(transit.mount)/keys/\(name); a key ID names one key, so nothing was imported.",
                    hint:
                        "Check that the .p8 is the key Apple issued under that key ID; an operator who knows the old key is gone can delete it (its deletion_allowed set first)."
                )
            case nil:
                try await Self.request {
                    do {
                        try await transit.importKey(name: name, privateKey: key)
                    } catch {
                        // Another importer of the same key may have been first: that is the key wanted.
                        let info = try? await transit.keyInfo(name: name)
                        let latest = info.flatMap { $0.publicKeys[$0.latestVersion] }.flatMap {
                            try? P256.Signing.PublicKey(pemRepresentation: $0)
                        }
                        if latest?.derRepresentation != publicKey { throw error }
                    }
                }
                return
            }
        }
        let value = secret.withUnsafeBytes { Data($0).base64EncodedString() }
        let kv = self.kv
        let path = path(of: item)
        // Replacing is the store's decision (it journals and rotates): write over what is there.
        _ = try await Self.request {
            let current = try await kv.readIfPresent(path)
            return try await kv.write(path, data: ["value": value], cas: current?.version ?? 0)
        }
    }

    public func lookup(_ item: SecretItem) async throws -> SecretBytes? {
        // A token key never comes back: remoteTokenKey(for:) gives what signs with it.
        if item.kind == .tokenKey { return nil }
        let kv = self.kv
        let path = path(of: item)
        guard let entry = try await Self.request({ try await kv.readIfPresent(path) }),
            let text = entry.data["value"], let bytes = Data(base64Encoded: text)
        else { return nil }
        return SecretBytes([UInt8](bytes))
    }

    @discardableResult public func remove(_ item: SecretItem) async throws -> Bool {
        // A Transit key stays until an operator deletes it (deletion needs a key's config
        // changed, which a writer's policy does not grant): the store forgets it.
        if item.kind == .tokenKey { return false }
        let kv = self.kv
        let path = path(of: item)
        return try await Self.request {
            guard try await kv.readIfPresent(path) != nil else { return false }
            try await kv.delete(path)
            return true
        }
    }

    public func checkAvailable() async throws {
        let client = self.client
        try await Self.request { try await client.checkAccess() }
    }

    public func items(store: String) async throws -> [SecretItem] {
        // Orphan search walks the store's KV folder; Transit keys are named by key ID only.
        let kv = self.kv
        let folder = path(of: SecretItem(store: store, alias: "x", kind: .privateKey, identifier: "x"))
            .split(separator: "/").dropLast(3).joined(separator: "/")
        // A reader's policy may not list the store's secrets: it has no orphans to find.
        let listable = try await Self.request {
            do {
                _ = try await kv.list(folder)
                return true
            } catch let error as VaultError where error.code == .permissionDenied {
                return false
            }
        }
        guard listable else { return [] }
        return try await Self.request {
            var found: [SecretItem] = []
            for alias in try await kv.list(folder) where alias.hasSuffix("/") {
                let alias = String(alias.dropLast())
                for kind in try await kv.list("\(folder)/\(alias)") where kind.hasSuffix("/") {
                    guard let known = SecretItem.Kind(rawValue: String(kind.dropLast())) else { continue }
                    for identifier in try await kv.liveNames("\(folder)/\(alias)/\(known.rawValue)") {
                        found.append(SecretItem(store: store, alias: alias, kind: known, identifier: identifier))
                    }
                }
            }
            return found
        }
    }

    public func placeOf(_ item: SecretItem) -> String {
        if item.kind == .tokenKey {
            return
                "in Vault's Transit at \(client.address) (\(transit.mount)/keys/\(Transit.keyName(for: item.identifier)))"
        }
        return "in Vault at \(client.address) (\(kv.mount)/\(path(of: item)))"
    }

    public func remoteTokenKey(for item: SecretItem, keyID: String, teamID: String) async throws -> RemoteProviderKey? {
        guard item.kind == .tokenKey else { return nil }
        let transit = self.transit
        let name = Transit.keyName(for: keyID)
        let info: TransitKeyInfo
        do {
            info = try await Self.request { try await transit.keyInfo(name: name) }
        } catch let error as ReportedVaultError where error.error.code == .notFound {
            return nil
        }
        let publicKey = info.publicKeys[info.latestVersion].flatMap {
            try? P256.Signing.PublicKey(pemRepresentation: $0)
        }
        // Shared tokens are verified against the key the store reads (and checks against its
        // index), so that a token in the entry that this key did not sign is never sent.
        let source = try SharedProviderToken(
            kv: kv,
            transit: transit,
            keyID: keyID,
            teamID: teamID,
            prefix: prefix,
            publicKey: publicKey
        )
        return RemoteProviderKey(source: source, publicKeyDER: publicKey.map { [UInt8]($0.derRepresentation) })
    }

    /// Runs one Vault request, its ``VaultError`` reported as the stores' callers read it.
    static func request<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as VaultError {
            throw error.reportable
        }
    }
}
