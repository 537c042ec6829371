import CredentialFormats
import Foundation
import PushCore
import PushStore
import TestSupport
import Testing

/// The store's lock is the one flock of the folder, tried without blocking: a change waits for
/// another process's hold up to its bound, then names that process, and has the lock once it
/// is let go.
struct StoreLockTests {
    /// `flock(1)` holding the store's lock until its standard input closes.
    final class Holder {
        let process = Process()
        private let input = Pipe()

        init(lockFile: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
            process.arguments = ["--exclusive", lockFile, "cat"]
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            try process.run()
        }

        func release() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    @Test func aLockHeldByAnotherProcessIsNamedAndNothingRuns() async throws {
        let folder = try TemporaryFolder()
        let lockFile = StoreLock.path(root: folder.url)
        let holder = try Holder(lockFile: lockFile)
        defer { holder.release() }
        #expect(try await eventually { Self.heldElsewhere(lockFile) })

        var ran = false
        do {
            try await StoreLock.withLock(root: folder.url, waitingUpTo: .zero) { ran = true }
            Issue.record("the store's lock was had while another process held it")
        } catch let error as CredentialError {
            #expect(error.code == .storeError)
            #expect(error.message.contains("process \(holder.process.processIdentifier)"), "\(error.message)")
        }
        #expect(!ran)

        holder.release()
        let had = try await StoreLock.withLock(root: folder.url, waitingUpTo: .zero) { true }
        #expect(had)
    }

    @Test func aWaitingChangeHasTheLockOnceItIsLetGo() async throws {
        let folder = try TemporaryFolder()
        let lockFile = StoreLock.path(root: folder.url)
        let holder = try Holder(lockFile: lockFile)
        #expect(try await eventually { Self.heldElsewhere(lockFile) })
        // The holder lets go only once the waiter has the lock file open (it keeps it open
        // between its tries while the holder has the lock).
        async let waited: Bool = StoreLock.withLock(root: folder.url) { true }
        #expect(try await eventually { Self.openHere(lockFile) })
        holder.release()
        #expect(try await waited)
    }

    /// Whether a try of this process's own is refused (a try that succeeds lets go at once).
    static func heldElsewhere(_ path: String) -> Bool {
        guard let probe = try? FileLock(path: path, create: true, busy: { _ in CancellationError() }) else {
            return false
        }
        defer { probe.close() }
        return (try? probe.tryLock()) == false
    }

    /// Whether this process has `path` open.
    static func openHere(_ path: String) -> Bool {
        var wanted = stat()
        guard stat(path, &wanted) == 0 else { return false }
        let folder = "/proc/self/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { entry in
            var status = stat()
            return stat("\(folder)/\(entry)", &status) == 0 && status.st_ino == wanted.st_ino
                && status.st_dev == wanted.st_dev
        }
    }
}
