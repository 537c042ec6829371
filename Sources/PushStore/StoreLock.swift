import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's lock: `flock` on its `.lock` file, exclusive for a change, shared for a reader.
/// The one lock of a store folder: the store's changes, its settling of interrupted changes and
/// the team store's merges and setup all take it, so that none of them runs while another does.
package struct StoreLock: Sendable {
    package enum Mode: Sendable {
        case exclusive
        case shared
    }

    /// Why the lock was not had: the file could not be opened (with `errno`), or not locked.
    package enum Failure: Error, Sendable {
        case open(errno: Int32)
        case lock
    }

    /// The store's lock file.
    package static func path(root: URL) -> String { root.appendingPathComponent(".lock").path }

    package let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Opens `path` (created, 0600, unless `create` is false: then read only, and a missing file
    /// is a failure) and waits for the lock on ``BlockingPool``. Whoever gets a lock releases it.
    package static func acquire(
        at path: String,
        _ mode: Mode = .exclusive,
        create: Bool = true
    ) async -> Result<StoreLock, Failure> {
        do {
            return try await BlockingPool.run { acquireWaiting(at: path, mode, create: create) }
        } catch {
            // Cancelled before the wait began: nothing was opened.
            return .failure(.lock)
        }
    }

    private static func acquireWaiting(at path: String, _ mode: Mode, create: Bool) -> Result<StoreLock, Failure> {
        BlockingWork.check("Waiting for the store's lock (\(path))")
        let descriptor =
            create ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(.open(errno: errno)) }
        guard flock(descriptor, mode == .exclusive ? LOCK_EX : LOCK_SH) == 0 else {
            close(descriptor)
            return .failure(.lock)
        }
        return .success(StoreLock(path: path, descriptor: descriptor))
    }

    /// Unlocks and closes the file.
    package func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
