import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `flock` on a file: the store folder's `.lock` (exclusive for a change, shared for a reader)
/// and a bulk run's results file. Each try is `flock(LOCK_NB)`, so a caller waiting for the lock
/// (``ExclusiveLock/acquire(waitingUpTo:backoff:)``) holds no thread while it waits.
///
/// The file stays open from ``init(path:mode:create:)`` until ``close()`` (or the end of the
/// object): the kernel drops the lock when the process dies however it dies, so a lock left by
/// a killed process never needs clearing by hand. A `flock` belongs to the open file, not the
/// process's other descriptors of it: reading the file again elsewhere does not release it, as
/// it would a POSIX record lock, and two opens in one process exclude each other.
package final class FileLock: ExclusiveLock, @unchecked Sendable {
    package enum Mode: Sendable {
        case exclusive
        case shared
    }

    /// Why the file could not be opened or locked, with `errno`.
    package enum Failure: Error, Sendable {
        case open(errno: Int32)
        case lock(errno: Int32)
    }

    package let path: String
    package let mode: Mode
    private let whenBusy: @Sendable (_ holder: String?) -> any Error
    private let state = NSLock()
    private var descriptor: Int32

    /// Opens `path` (created, 0600, when `create`; else read only, and a missing file is a
    /// failure) without locking it yet. `busy` is the error of a caller that did not have the
    /// lock in time, given who holds it where the kernel shows it.
    package init(
        path: String,
        mode: Mode = .exclusive,
        create: Bool = false,
        busy: @escaping @Sendable (_ holder: String?) -> any Error
    ) throws(Failure) {
        let descriptor =
            create ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .open(errno: errno) }
        self.path = path
        self.mode = mode
        self.descriptor = descriptor
        self.whenBusy = busy
    }

    deinit { close() }

    /// One try, at once: true when the lock is had now, false when someone else has it.
    package func tryLock() throws(Failure) -> Bool {
        state.lock()
        defer { state.unlock() }
        guard descriptor >= 0 else { throw .lock(errno: EBADF) }
        while true {
            if flock(descriptor, (mode == .exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 { return true }
            let code = errno
            if code == EWOULDBLOCK { return false }
            if code != EINTR { throw .lock(errno: code) }
        }
    }

    package func tryAcquire() async throws -> LockTry<Void> {
        try tryLock() ? .acquired(()) : .busy(holder: holder())
    }

    package func busy(holder: String?) -> any Error { whenBusy(holder) }

    /// Unlocks; the file stays open for another try.
    package func release(_ held: Void = ()) async {
        state.withLock { if descriptor >= 0 { _ = flock(descriptor, LOCK_UN) } }
    }

    /// Closes the file, which drops the lock if it is held.
    package func close() {
        state.withLock {
            guard descriptor >= 0 else { return }
            _ = systemClose(descriptor)
            descriptor = -1
        }
    }

    /// "process 1234" from the kernel's table of locks (`/proc/locks`), or nil where that table
    /// cannot be read or names no other process.
    package func holder() -> String? {
        var info = stat()
        guard state.withLock({ descriptor >= 0 && fstat(descriptor, &info) == 0 }),
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return nil }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let wanted = String(format: "%02x:%02x:%llu", major, minor, UInt64(info.st_ino))
        let own = getpid()
        for row in table.split(separator: "\n") {
            let fields = row.split(separator: " ", omittingEmptySubsequences: true)
            // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == wanted, let pid = Int32(fields[4]),
                pid != own
            else { continue }
            return "process \(pid)"
        }
        return nil
    }
}

#if canImport(Glibc)
private let systemClose = Glibc.close
#elseif canImport(Darwin)
private let systemClose = Darwin.close
#endif
