import CredentialFormats
import Foundation
import PushCore
import PushStore
import PushVault

/// A Vault store's lock, the entry `PREFIX/lock` (see ``VaultMedium``): created with
/// check-and-set 0, so exactly one writer creates it; an entry older (or newer) than
/// `staleAfter` was left by a writer that is gone, and is taken over with check-and-set on its
/// version; removed by its writer at the end, if it is still that writer's (its `nonce`).
/// Waited for the way every ``ExclusiveLock`` is.
struct VaultLock: ExclusiveLock {
    let kv: KVv2
    let path: String
    /// The store's name, for errors.
    let store: String
    let nonce = UUID().uuidString
    let holder = "\(ProcessInfo.processInfo.hostName) pid \(getpid())"
    let staleAfter: Duration
    let atLockStep: (@Sendable (VaultMedium.LockStep) async throws -> Void)?

    /// What a writer holds: whose stale lock it took over, if it did.
    struct Held: Sendable {
        let tookOverFrom: String?
    }

    func tryAcquire() async throws -> LockTry<Held> {
        let fields = ["nonce": nonce, "holder": holder, "since": String(Int(Date().timeIntervalSince1970))]
        let outcome = try await create(fields)
        switch outcome {
        case .acquired:
            return .acquired(Held(tookOverFrom: nil))
        case .moved:
            return .busy(holder: nil)
        case .held(let current):
            if VaultMedium.isStale(current, now: Date(), bound: staleAfter) {
                // Its writer is gone: take the lock over, unless another writer just did.
                let kv = self.kv
                let path = self.path
                let taken = try? await VaultSecretStore.request {
                    try await kv.write(path, data: fields, cas: current.version)
                }
                if taken != nil { return .acquired(Held(tookOverFrom: current.data["holder"])) }
            }
            return .busy(holder: current.data["holder"])
        }
    }

    /// One try at creating the entry.
    private func create(_ fields: [String: String]) async throws -> LockAttempt {
        let kv = self.kv
        let lockPath = self.path
        let name = self.store
        let atLockStep = self.atLockStep
        return try await VaultSecretStore.request {
            do {
                _ = try await kv.write(lockPath, data: fields, cas: 0)
                return .acquired
            } catch let error as VaultError where error.code == .permissionDenied {
                // Every change starts here: a token that may not take the lock only reads
                // the store, and the change wants a writer's token.
                throw VaultError.readOnlyToken(
                    address: kv.client.address,
                    path: error.subject.path ?? "\(kv.mount)/data/\(lockPath)",
                    capability: error.subject.capability ?? "create",
                    store: name
                )
            } catch let error as VaultError where error.code == .casMismatch {
                try await atLockStep?(.createRefused)
                // Held, or left deleted (its metadata remains): look at it.
                if let current = try await kv.readIfPresent(lockPath) { return .held(current) }
                try await atLockStep?(.foundNone)
                do {
                    // Replaced only if its latest version is still a deleted one: a live one
                    // is a writer that created it since the read, and holds it.
                    let metadata = try await kv.metadata(lockPath)
                    let latest = metadata.versions[metadata.currentVersion]
                    guard latest?.deletionTime != nil || latest?.destroyed == true else { return .moved }
                    _ = try await kv.write(lockPath, data: fields, cas: metadata.currentVersion)
                    return .acquired
                } catch let error as VaultError where error.code == .notFound || error.code == .casMismatch {
                    // Released by its holder (which destroys it, metadata and all) or taken by
                    // another writer between these calls: the lock moved, so look again.
                    return .moved
                }
            }
        }
    }

    /// Removes the lock entry, if it is still this writer's.
    func release(_ held: Held) async {
        let kv = self.kv
        let lockPath = self.path
        let nonce = self.nonce
        _ = try? await VaultSecretStore.request {
            guard let current = try await kv.readIfPresent(lockPath), current.data["nonce"] == nonce else { return }
            try await kv.destroyAll(lockPath)
        }
    }

    /// The error of a writer that did not get the lock in time.
    func busy(holder: String?) -> any Error {
        CredentialError(
            .storeError,
            path: store,
            "The store \(store) is being changed by \(holder ?? "another apnsctl") (its lock, \(kv.mount)/\(path), is held); nothing was changed.",
            hint:
                "Run the command again once that change ends; a lock left by a process that died is taken over after a minute."
        )
    }
}

/// What one try at creating the lock entry found.
private enum LockAttempt: Sendable {
    /// The entry is this writer's now.
    case acquired
    /// Another writer holds it, since this entry's `since`.
    case held(KVEntry)
    /// It changed hands between the calls of this try.
    case moved
}
