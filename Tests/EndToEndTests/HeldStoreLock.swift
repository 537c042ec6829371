import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's lock (`flock` on its `.lock`), held by the test, so that `apnsctl` processes that
/// change the store must wait for it: their changes then overlap because the test forces them
/// to, not because a sleep was long enough.
final class HeldStoreLock {
    private let descriptor: Int32
    private let inode: UInt64

    /// Takes the exclusive lock of the store at `store`, creating its folder (as an empty store)
    /// and lock file when missing.
    init(store: String) throws {
        try FileManager.default.createDirectory(
            atPath: store,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let path = store + "/.lock"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        guard flock(descriptor, LOCK_EX) == 0 else {
            close(descriptor)
            throw CocoaError(.fileLocking, userInfo: [NSFilePathErrorKey: path])
        }
        var status = stat()
        fstat(descriptor, &status)
        inode = UInt64(status.st_ino)
    }

    /// Whether `process` is waiting for this lock: it has the lock file open (a waiting apnsctl
    /// keeps it open between its tries, which never block; the test holds the lock throughout).
    func isWaiting(_ process: Int32) -> Bool {
        let folder = "/proc/\(process)/fd"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            var status = stat()
            if stat("\(folder)/\(entry)", &status) == 0, UInt64(status.st_ino) == inode { return true }
        }
        return false
    }

    /// Waits until each of `processes` is waiting for the lock or has ended (one that failed
    /// before reaching the lock must not hang the test). The bound only ends a hung test.
    /// True when every process came to the lock or ended.
    @discardableResult
    func awaitWaiting(_ processes: [Process], timeout: TimeInterval = 120) -> Bool {
        waitUntil(timeout: timeout) {
            processes.allSatisfy { !$0.isRunning || self.isWaiting($0.processIdentifier) }
        }
    }

    /// Lets the waiting processes have the lock, one after another.
    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
