import NIOPosix
import PushCore

/// The threads the libraries run their blocking work on: the Secret Service's libsecret calls,
/// a folder's `flock`, git and age, file reads of a medium. A caller awaits the work and keeps
/// its own thread (an event loop, or Swift's shared pool of as many threads as cores) free.
///
/// One swift-nio `NIOThreadPool` of the libraries' own, started on first use and kept for the
/// life of the process; not NIO's singleton, which a program embedding these libraries may size
/// and use for its own work.
public enum BlockingPool {
    /// Waits on a lock or a child program can last seconds: a pool wider than the machine, so
    /// that a few of them never hold up a quick read.
    public static let threadCount = 8

    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threadCount)
        pool.start()
        return pool
    }()

    /// Runs `body` on the pool and returns what it returns (or throws what it throws). A task
    /// cancelled before its work starts gets `CancellationError` and the work never runs.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive { try BlockingWork.onPool(body) }
    }
}
