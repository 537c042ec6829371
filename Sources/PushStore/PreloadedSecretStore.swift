import CredentialFormats
import Foundation

/// A secret store that answers from secrets read together beforehand and asks its base for
/// anything else: a check over a whole store reads every key in one Secret Service round trip
/// instead of one per credential. A secret stored or removed through it is forgotten first, so
/// it never answers with a value it has seen replaced. The stores' items the same read listed
/// answer ``items(store:)`` (the check's orphan search) until a secret of that store changes.
final class PreloadedSecretStore: SecretStore, @unchecked Sendable {
    let base: any SecretStore
    private let lock = NSLock()
    private var preloaded: [SecretItem: SecretBytes]
    private var listed: [String: [SecretItem]]

    init(base: any SecretStore, preloaded: [SecretItem: SecretBytes], listed: [String: [SecretItem]] = [:]) {
        self.base = base
        self.preloaded = preloaded
        self.listed = listed
    }

    func lookup(_ item: SecretItem) async throws -> SecretBytes? {
        if let secret = lock.withLock({ preloaded[item] }) { return secret }
        return try await base.lookup(item)
    }

    func lookup(_ items: [SecretItem]) async throws -> [SecretItem: SecretBytes] {
        let known = lock.withLock { preloaded }
        let rest = items.filter { known[$0] == nil }
        var found = rest.isEmpty ? [:] : try await base.lookup(rest)
        for item in items { if let secret = known[item] { found[item] = secret } }
        return found
    }

    func store(_ secret: SecretBytes, for item: SecretItem) async throws {
        forget(item)
        try await base.store(secret, for: item)
    }

    @discardableResult func remove(_ item: SecretItem) async throws -> Bool {
        forget(item)
        return try await base.remove(item)
    }

    func checkAvailable() async throws { try await base.checkAvailable() }
    func items(store: String) async throws -> [SecretItem] {
        if let items = lock.withLock({ listed[store] }) { return items }
        return try await base.items(store: store)
    }
    func placeOf(_ item: SecretItem) -> String { base.placeOf(item) }
    func remoteTokenKey(for item: SecretItem, keyID: String, teamID: String) async throws -> RemoteProviderKey? {
        try await base.remoteTokenKey(for: item, keyID: keyID, teamID: teamID)
    }

    private func forget(_ item: SecretItem) {
        lock.withLock {
            preloaded[item] = nil
            listed[item.store] = nil
        }
    }
}

extension CredentialStore {
    /// This store with the secrets of `credentials` read together up front (the batch
    /// ``SecretStore`` lookup, which may list the store's items too, for its orphan search), for
    /// a command about to read them all, and the error that says the
    /// secret store cannot be used now when the batch found that (the first lookup would say the
    /// same). Anything the batch did not answer is read credential by credential as before, so
    /// every message and finding stays the same.
    public func preloadingSecrets(
        for credentials: [StoredCredential]
    ) async -> (
        store: CredentialStore, unavailable: CredentialError?
    ) {
        guard credentials.count > 1 else { return (self, nil) }
        var items = credentials.map { $0.secretItem(store: path) }
        if let givenPath { items += credentials.map { $0.secretItem(store: givenPath) } }
        let read: (secrets: [SecretItem: SecretBytes], listed: [String: [SecretItem]])
        do {
            read = try await secrets.lookupListing(items)
        } catch let error as CredentialError {
            return (self, error)
        } catch {
            return (self, nil)
        }
        guard !read.secrets.isEmpty || !read.listed.isEmpty else { return (self, nil) }
        var copy = self
        copy.secrets = PreloadedSecretStore(base: secrets, preloaded: read.secrets, listed: read.listed)
        return (copy, nil)
    }
}
