import CredentialFormats
import Foundation
import PushCore
import PushStore
import PushVault

/// A store's index, journal and credentials' public files in a KV version 2 mount of Vault or
/// OpenBao (see docs/vault.md, "The store on Vault").
///
/// Each record is an entry `PREFIX/files/NAME` with one field, `value` (base64 of the bytes).
/// A change is made by one writer at a time: the lock is the entry `PREFIX/lock`, created with
/// check-and-set 0 (so exactly one writer creates it) and removed at the end; a lock older than
/// ``staleAfter`` was left by a writer that died, and is taken over. The index, the record
/// whose write is the change, is written with check-and-set on the version read when the change
/// began: if anything replaced it meanwhile (a writer that took over a lock it judged stale),
/// the write is refused and nothing changes.
///
/// A removed record is deleted the way `vault kv delete` deletes: its versions stay, and an
/// operator can read or undelete them (`bao kv undelete`) until they are destroyed, so the
/// index's versions are the store's history.
public struct VaultMedium: StoreMedium {
    public let kv: KVv2
    public let prefix: String
    /// How long a writer waits for another's lock before giving up.
    public var lockWait: Duration = .seconds(30)
    /// A lock older than this was left by a writer that is gone (a change takes well under it).
    public var staleAfter: Duration = .seconds(60)
    private let held = HeldLock()
    /// For tests: runs at the steps of taking the lock where another writer's move (a release, a
    /// create) changes what the next call finds.
    var atLockStep: (@Sendable (LockStep) async throws -> Void)?

    /// The steps ``atLockStep`` is called at.
    enum LockStep: Sendable {
        /// This writer's create was refused; it has not yet looked at who holds the lock.
        case createRefused
        /// It looked and found no live entry; it has not yet read the entry's metadata.
        case foundNone
    }

    public init(kv: KVv2, prefix: String) {
        self.kv = kv
        self.prefix = prefix.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    }

    public var name: String { "vault:\(kv.mount)/\(prefix)" }

    /// The KV path of a record.
    func path(_ relative: String) -> String { "\(prefix)/files/\(relative)" }
    var lockPath: String { "\(prefix)/lock" }

    public func checkAvailable() async throws {
        let kv = self.kv
        try await VaultSecretStore.request { try await kv.checkVersion() }
    }

    public func read(_ relative: String) async throws -> [UInt8]? {
        let kv = self.kv
        let path = path(relative)
        guard let entry = try await VaultSecretStore.request({ try await kv.readIfPresent(path) }) else { return nil }
        guard let text = entry.data["value"], let bytes = Data(base64Encoded: text) else {
            throw CredentialError(
                .storeError,
                path: "\(name)/\(relative)",
                "The entry \(kv.mount)/\(path) at \(kv.client.address) has no readable \"value\" field; it was written outside apnsctl.",
                hint: "Restore an earlier version of it (bao kv rollback), or import the credential again."
            )
        }
        return [UInt8](bytes)
    }

    public func write(_ bytes: [UInt8], to relative: String) async throws {
        let kv = self.kv
        let path = path(relative)
        let value = Data(bytes).base64EncodedString()
        try await VaultSecretStore.request { _ = try await kv.write(path, data: ["value": value]) }
    }

    public func writeIndex(_ bytes: [UInt8]) async throws {
        let kv = self.kv
        let path = path("index.json")
        let value = Data(bytes).base64EncodedString()
        let version = held.indexVersion ?? 0
        let written = try await VaultSecretStore.request {
            try await kv.write(path, data: ["value": value], cas: version)
        }
        held.indexVersion = written
    }

    @discardableResult public func remove(_ relative: String) async throws -> Bool {
        let kv = self.kv
        let path = path(relative)
        return try await VaultSecretStore.request {
            guard try await kv.readIfPresent(path) != nil else { return false }
            try await kv.delete(path)
            return true
        }
    }

    public func list(_ folder: String) async throws -> [String] {
        let kv = self.kv
        let path = path(folder)
        return try await VaultSecretStore.request { try await kv.liveNames(path) }
    }

    /// Runs `body` holding the store's lock. A change decided while another writer held the
    /// lock would be decided on a store that moved: when the index changed while this writer
    /// waited, the change is refused (the other writer won) and nothing is written.
    public func exclusive<R>(_ body: () async throws -> R) async throws -> R {
        let kv = self.kv
        let indexPath = path("index.json")
        func version() async throws -> Int {
            try await VaultSecretStore.request { try await kv.readIfPresent(indexPath)?.version ?? 0 }
        }
        let seen = try await version()
        let lock = VaultLock(kv: kv, path: lockPath, store: name, staleAfter: staleAfter, atLockStep: atLockStep)
        return try await lock.withLock(waitingUpTo: lockWait) { taken, waitedFor in
            let holder = waitedFor ?? taken.tookOverFrom
            let current = try await version()
            if current != seen {
                throw CredentialError(
                    .storeError,
                    path: name,
                    "The store \(name) was changed by \(holder ?? "another writer") while this command waited for it (its index went from version \(seen) to \(current)); nothing was changed.",
                    hint: "Look at the store as it is now, then run the command again if it is still needed."
                )
            }
            held.indexVersion = current
            defer { held.indexVersion = nil }
            return try await body()
        }
    }

    /// Whether a lock entry was left by a writer that is gone: its `since` lies more than
    /// `bound` away from now, in the past (a change takes well under it) or in the future (no
    /// clock that dated a live lock is that far ahead; a lock from the future would otherwise
    /// never age). An entry without a readable `since` was not written by apnsctl: stale too.
    static func isStale(_ entry: KVEntry, now: Date, bound: Duration) -> Bool {
        guard let since = entry.data["since"].flatMap({ Double($0) }), since.isFinite else { return true }
        return abs(now.timeIntervalSince1970 - since) > Double(bound.components.seconds)
    }
}

/// What one change holds: the index's version when it began.
private final class HeldLock: @unchecked Sendable {
    private let lock = NSLock()
    private var version: Int?
    var indexVersion: Int? {
        get { lock.withLock { version } }
        set { lock.withLock { version = newValue } }
    }
}

extension KVv2 {
    /// The entries directly under `path` whose latest version is neither deleted nor destroyed
    /// (folders left out): what a listing of the store means.
    func liveNames(_ path: String) async throws -> [String] {
        var live: [String] = []
        for name in try await list(path) where !name.hasSuffix("/") {
            let metadata = try await metadata("\(path)/\(name)")
            let latest = metadata.versions[metadata.currentVersion]
            if latest?.deletionTime == nil, latest?.destroyed != true { live.append(name) }
        }
        return live
    }
}
