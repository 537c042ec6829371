import CredentialFormats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a change is made, on a folder or another medium: one lock, the journal settled before
/// and after, the index written last.
extension CredentialStore {
    /// Runs `body` on the index under an exclusive lock and writes the index back atomically
    /// when it returns. `body` journals what it creates or discards (see ``StoreJournal``)
    /// before doing it; the index's rename is the change, and settling the journal against the
    /// index written (or, when `body` throws, the index as it was) completes or undoes the rest.
    /// `afterCommit` runs after that, still under the lock; then the change observer is told,
    /// still under the lock, and what it hands back (a team store's push) runs once the lock is
    /// released, so that nothing slow keeps other commands waiting on the store.
    package func withLock<R>(
        _ body: (inout StoreIndex) async throws -> R,
        afterCommit: (R, Settled) -> R = { result, _ in result }
    ) async throws -> R {
        let (result, followUp) = try await lockedChange(body, afterCommit: afterCommit)
        await followUp?()
        return result
    }

    private func lockedChange<R>(
        _ body: (inout StoreIndex) async throws -> R,
        afterCommit: (R, Settled) -> R
    ) async throws -> (R, StoreChangeFollowUp?) {
        // Ask the Secret Service before taking the lock, so a slow or missing one never keeps
        // other apnsctl processes waiting on the store.
        try await secrets.checkAvailable()
        if let medium {
            try await medium.checkAvailable()
            return try await medium.exclusive { try await change(body, afterCommit: afterCommit) }
        }
        try prepareFolder()
        return try await StoreLock.withLock(root: root) { try await change(body, afterCommit: afterCommit) }
    }

    /// One change, under the store's exclusive lock (whatever the medium's lock is).
    private func change<R>(
        _ body: (inout StoreIndex) async throws -> R,
        afterCommit: (R, Settled) -> R
    ) async throws -> (R, StoreChangeFollowUp?) {
        var index = try await readIndex()
        if try await !indexPresent() {
            // A new store gets its index before any credential file, so that files are never
            // found without the index that accounts for them.
            try await writeIndex(index)
        }
        // What a command killed earlier left is completed or undone before anything else.
        await settle(index)
        let before = index
        let result: R
        do {
            result = try await body(&index)
            try await writeIndex(index)
        } catch {
            // Nothing was committed: take back what `body` journaled.
            await settle(before)
            throw error
        }
        let committed = afterCommit(result, await settle(index))
        return (committed, await changeObserver?.storeChanged(self, from: before, to: index))
    }

    package func prepareFolder() throws {
        _ = try folderState()
        for folder in [root, credentialsFolder] {
            do {
                try FileManager.default.createDirectory(
                    at: folder,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )
                chmod(folder.path, 0o700)
            } catch {
                throw CredentialError(
                    .storeError,
                    path: folder.path,
                    "The store folder cannot be created (\(error.localizedDescription)).",
                    hint: "Keep the store in a folder this user can create and write."
                )
            }
        }
        let credentials = StorePaths.realPath(credentialsFolder.path)
        guard credentials == paths.credentialsFolder else {
            throw CredentialError(
                .storeError,
                path: credentialsFolder.path,
                "The store's credentials folder leads to \(credentials ?? "nowhere"), outside the store; nothing was written.",
                hint: "Make credentials a plain folder inside the store (move the link away) and try again."
            )
        }
    }

    /// Writes `data` to `relative` atomically (see ``PrivateFile/write(_:to:overwrite:)``).
    func writeFile(_ data: Data, to relative: String) async throws {
        if let medium { return try await medium.write([UInt8](data), to: relative) }
        try PrivateFile.write([UInt8](data), to: root.appendingPathComponent(relative).path, overwrite: true)
    }

    /// Writes the index: the step at which a change happens.
    func writeIndex(_ index: StoreIndex) async throws {
        let data = try ReportSchema.encoder().encode(index)
        if let medium { return try await medium.writeIndex([UInt8](data)) }
        try await writeFile(data, to: "index.json")
    }

    func indexPresent() async throws -> Bool {
        if let medium { return try await medium.read("index.json") != nil }
        return FileManager.default.fileExists(atPath: indexURL.path)
    }

    /// The index a medium keeps; none yet is an empty store, and one that cannot be decoded
    /// is an error, never an empty store.
    func readIndex(from medium: any StoreMedium) async throws -> StoreIndex {
        guard let bytes = try await medium.read("index.json") else { return StoreIndex() }
        do {
            return try StoreIndex.decoded(from: bytes)
        } catch {
            throw CredentialError(
                .indexUnreadable,
                path: "\(medium.name)/index.json",
                "The store's index cannot be read (\(UserFacing.describe(error))); it was changed outside apnsctl.",
                hint:
                    "Restore the index from an earlier version (the secret manager keeps them), or import each credential again into a new store."
            )
        }
    }
}
