import CredentialFormats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Secrets the Secret Service keeps for this store that no index entry names: what an
/// interrupted remove (or import) leaves behind. They are found by the store's attributes
/// (`application apnsctl store PATH`), reported by a check, and removed only on request.
extension CredentialStore {
    /// What a removal did.
    public struct Removal: Sendable {
        /// The entry taken out of the index; nil when the alias had no entry, only orphaned secrets.
        public var credential: StoredCredential?
        /// The files removed from the credentials folder.
        public var files: [String] = []
        /// Files the entry named outside the store, which were left alone.
        public var filesLeftAlone: [String] = []
        /// Whether the Secret Service held the entry's secret and removed it.
        public var removedSecret = false
        /// Why the secret could not be removed: it is now an orphaned secret.
        public var secretError: CredentialError?
        /// Orphaned secrets of the alias that were removed.
        public var orphansRemoved: [SecretItem] = []
    }

    /// Removes a credential as one step: its files and secret are journaled, the index that no
    /// longer names it is written, and settling deletes them; a removal killed at any point is
    /// completed (or, before the index was written, undone) by the next command. An alias with no
    /// entry but orphaned secrets has those removed.
    @discardableResult
    public func remove(alias: String) async throws -> Removal {
        var removal = Removal()
        try await withLock { index in
            guard let position = index.credentials.firstIndex(where: { $0.alias == alias }) else {
                let orphans = try await self.orphans(in: index).filter { $0.alias == alias }
                guard !orphans.isEmpty else { throw self.notFound(alias, in: index) }
                for item in orphans { try await self.secrets.remove(item) }
                removal.orphansRemoved = orphans
                return
            }
            let credential = index.credentials[position]
            try await self.journal(self.discarding(credential))
            index.credentials.remove(at: position)
            removal.credential = credential
        } afterCommit: { _, settled in
            guard let credential = removal.credential else { return }
            removal.files = settled.removedFiles
            removal.filesLeftAlone = [credential.certificateFile, credential.bundleFile].compactMap { $0 }.filter {
                !self.isInside($0)
            }
            let item = credential.secretItem(store: self.path)
            removal.removedSecret = self.withLegacy(item).contains(where: settled.removedSecrets.contains)
            removal.secretError = settled.failedSecrets[item]
        }
        return removal
    }

    /// The Secret Service items of this store that no index entry names.
    public func orphanedSecrets() async throws -> [SecretItem] {
        try await withSharedLock { try await orphans(in: try await readIndex()) }
    }

    /// Removes every orphaned secret of this store (and the store's own leftover files, as every
    /// change does). Returns what was removed; stops at the first secret that cannot be removed.
    @discardableResult
    public func removeOrphanedSecrets() async throws -> [SecretItem] {
        var removed: [SecretItem] = []
        try await withLock { index in
            for item in try await self.orphans(in: index) {
                try await self.secrets.remove(item)
                removed.append(item)
            }
        }
        return removed
    }

    func orphans(in index: StoreIndex) async throws -> [SecretItem] {
        // A pending request's private key is referenced too: it is the only copy of that key.
        let referenced =
            index.credentials.map { $0.secretItem(store: path) }
            + (index.requests ?? []).map { $0.secretItem(store: path) }
        // A secret an interrupted change journaled is settled by the next change, not an orphan.
        let journaled = Set(await readJournal().secrets)
        let orphans = try await secrets.items(store: path).filter {
            !referenced.contains($0) && !journaled.contains($0)
        }
        // Items listed by a batch read before this index was read may include one removed since:
        // what looks orphaned is listed again (a check with no orphans lists the store once).
        guard !orphans.isEmpty, let preloaded = secrets as? PreloadedSecretStore else { return orphans }
        return try await preloaded.base.items(store: path).filter {
            !referenced.contains($0) && !journaled.contains($0)
        }
    }

    /// Runs `body` under a shared lock on the store when it has a lock file, so that a reader
    /// does not see an import between storing its secret and writing its index.
    func withSharedLock<R>(_ body: () async throws -> R) async throws -> R {
        // A medium's records are each read whole, and a credential's files are never written
        // over (their names carry the certificate's fingerprint): a reader needs no lock there.
        if medium != nil { return try await body() }
        // No lock file (a store never changed), or none this reader can open: read anyway.
        guard let lock = try? StoreLock.open(root: root, .shared, create: false) else { return try await body() }
        return try await StoreLock.hold(lock, body)
    }
}
