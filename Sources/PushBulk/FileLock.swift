import Foundation
import PushCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a file, held while the process lives: the kernel drops it when the
/// process dies however it dies, so a lock left by a killed run never needs clearing by hand.
/// (A `flock` belongs to the open file, not the process's other descriptors of it: reading the
/// file again elsewhere does not release it, as it would a POSIX record lock.)
final class FileLock: @unchecked Sendable {
    let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Locks the existing file at `path`, or throws ``BulkRunError/Code/resultsLocked`` naming
    /// the process that holds it.
    static func acquire(_ path: String) throws -> FileLock {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw BulkRunError.resultsUnreadable(path: path, reason: AppendFile.describe(Errno(rawValue: errno)))
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let holder = holderDescription(descriptor)
            Glibc.close(descriptor)
            throw BulkRunError.resultsLocked(path: path, holder: holder)
        }
        return FileLock(path: path, descriptor: descriptor)
    }

    func release() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)  // closing the last descriptor of the open file drops the flock
        descriptor = -1
    }

    deinit { release() }

    /// "process 1234", from the kernel's table of locks, or "another process" where that table
    /// cannot be read.
    static func holderDescription(_ descriptor: Int32) -> String {
        var info = stat()
        guard fstat(descriptor, &info) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return "another process" }
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
        return "another process"
    }
}
