import CredentialFormats
import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's lock: a ``FileLock`` on its `.lock` file, exclusive for a change, shared for a
/// reader. The one lock of a store folder: the store's changes, its settling of interrupted
/// changes and the team store's merges and setup all take it, so that none of them runs while
/// another does. A waiting command waits the way every ``ExclusiveLock`` waits, up to
/// ``longestWait``, holding no thread.
package enum StoreLock {
    /// The store's lock file.
    package static func path(root: URL) -> String { root.appendingPathComponent(".lock").path }

    /// How long a command waits for another's change to end: far longer than any change takes
    /// (the team store pushes after letting go), short enough that a hung process is reported.
    package static let longestWait: Duration = .seconds(120)

    /// Runs `body` holding the store's lock, opening its lock file (created, 0600, unless
    /// `create` is false: then a missing file is a failure). Throws
    /// ``ErrorCode/storeError`` when the file cannot be opened or locked, or when another
    /// process keeps the lock past `wait` (naming it where the kernel shows it).
    package static func withLock<R>(
        root: URL,
        _ mode: FileLock.Mode = .exclusive,
        create: Bool = true,
        waitingUpTo wait: Duration = longestWait,
        _ body: () async throws -> R
    ) async throws -> R {
        try await hold(try open(root: root, mode, create: create), waitingUpTo: wait, body)
    }

    /// Opens the store's lock file without locking it (see ``withLock(root:_:create:waitingUpTo:_:)``).
    package static func open(root: URL, _ mode: FileLock.Mode, create: Bool) throws -> FileLock {
        let path = path(root: root)
        do {
            return try FileLock(path: path, mode: mode, create: create) { busy(holder: $0, path: path) }
        } catch {
            throw failure(error, path: path)
        }
    }

    /// Runs `body` holding `lock` (waiting up to `wait`), then closes its file.
    package static func hold<R>(
        _ lock: FileLock,
        waitingUpTo wait: Duration = longestWait,
        _ body: () async throws -> R
    ) async throws -> R {
        let path = lock.path
        defer { lock.close() }
        do {
            return try await lock.withLock(waitingUpTo: wait) { _, _ in try await body() }
        } catch let error as FileLock.Failure {
            throw failure(error, path: path)
        }
    }

    private static func failure(_ failure: FileLock.Failure, path: String) -> CredentialError {
        switch failure {
        case .open(let code):
            return CredentialError(
                .storeError,
                path: path,
                "The store's lock file cannot be opened (\(String(cString: strerror(code)))).",
                hint: "Check the store folder's owner and permissions."
            )
        case .lock(let code):
            return CredentialError(
                .storeError,
                path: path,
                "The store cannot be locked (\(String(cString: strerror(code)))).",
                hint: nil
            )
        }
    }

    private static func busy(holder: String?, path: String) -> CredentialError {
        CredentialError(
            .storeError,
            path: path,
            "The store is being changed by \(holder ?? "another process"), which still holds its lock; nothing was done.",
            hint: "Run the command again once that change ends, or end that process if it hangs."
        )
    }
}
