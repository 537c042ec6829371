import CredentialFormats
import PushCore

/// The Secret Service's seam: each call runs libsecret's blocking work on ``BlockingPool``, so a
/// caller (a task of Swift's shared pool, an event loop's) waits without holding its thread.
/// The work itself is in the `…Now` functions beside it.
extension LibSecretStore {
    public func store(_ secret: SecretBytes, for item: SecretItem) async throws {
        try await BlockingPool.run { try self.storeNow(secret, for: item) }
    }

    public func lookup(_ item: SecretItem) async throws -> SecretBytes? {
        try await BlockingPool.run { try self.lookupNow(item) }
    }

    /// The secrets of many items at once (see ``lookupListingNow(_:)``).
    public func lookup(_ items: [SecretItem]) async throws -> [SecretItem: SecretBytes] {
        try await lookupListing(items).secrets
    }

    /// The secrets of many items and their stores' items, in one read (``lookupListingNow(_:)``).
    public func lookupListing(
        _ items: [SecretItem]
    ) async throws -> (
        secrets: [SecretItem: SecretBytes], listed: [String: [SecretItem]]
    ) {
        try await BlockingPool.run { try self.lookupListingNow(items) }
    }

    @discardableResult
    public func remove(_ item: SecretItem) async throws -> Bool {
        try await BlockingPool.run { try self.removeNow(item) }
    }

    public func checkAvailable() async throws {
        try await BlockingPool.run { try self.ensureReady() }
    }

    public func items(store: String) async throws -> [SecretItem] {
        try await BlockingPool.run { try self.itemsNow(store: store) }
    }
}
