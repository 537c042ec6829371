import CredentialFormats
import PushCore
import SystemPackage

extension BulkRun {
    /// Locks the existing file at `path` for this run (a ``FileLock``, held until the run
    /// releases it or the process ends), or throws ``BulkRunError/Code/resultsLocked`` naming
    /// the process that holds it: a results file another run uses is refused at once, never
    /// waited for (the one try of ``ExclusiveLock``, without the wait).
    static func lockResults(_ path: String) throws -> FileLock {
        let lock: FileLock
        let locked: Bool
        do {
            lock = try FileLock(path: path) { BulkRunError.resultsLocked(path: path, holder: $0 ?? "another process") }
            locked = try lock.tryLock()
        } catch .open(let code), .lock(let code) {
            throw BulkRunError.resultsUnreadable(path: path, reason: AppendFile.describe(Errno(rawValue: code)))
        }
        guard locked else {
            defer { lock.close() }
            throw lock.busy(holder: lock.holder())
        }
        return lock
    }
}
