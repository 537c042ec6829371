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

    /// The processes waiting for this lock, as the kernel shows them (`->` lines of /proc/locks).
    func waiters() -> Set<Int32> {
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        var pids: Set<Int32> = []
        for line in locks.split(separator: "\n") where line.contains(" -> FLOCK ") {
            let fields = line.split(separator: " ")
            guard fields.count > 6, fields[6].hasSuffix(":\(inode)"), let pid = Int32(fields[5]) else { continue }
            pids.insert(pid)
        }
        return pids
    }

    /// Waits until each of `processes` is waiting for the lock or has ended (one that failed
    /// before reaching the lock must not hang the test). The bound only ends a hung test.
    /// True when every process came to the lock or ended.
    @discardableResult
    func awaitWaiting(_ processes: [Process], timeout: TimeInterval = 120) -> Bool {
        waitUntil(timeout: timeout) {
            let waiting = waiters()
            return processes.allSatisfy { !$0.isRunning || waiting.contains($0.processIdentifier) }
        }
    }

    /// Lets the waiting processes have the lock, one after another.
    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
