import Foundation

/// The rule that nothing blocks an event loop, checked in debug builds.
///
/// Work that can block (the Secret Service over D-Bus, a file lock, a child process, a file
/// read) calls ``check(_:)`` first. A module that runs event loops installs the question "is
/// this thread an event loop's?" with ``installEventLoopDetector(_:)`` (the client module does,
/// with NIO's `MultiThreadedEventLoopGroup.currentEventLoop`), so that a regression that moves
/// such work onto an event loop stops a debug build's tests at the call instead of stalling
/// every connection of that loop in production. Release builds skip the check.
public enum BlockingWork {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var detector: (@Sendable () -> Bool)?

    /// Installs the question; the first module to install it wins (they all ask the same).
    public static func installEventLoopDetector(_ isEventLoopThread: @escaping @Sendable () -> Bool) {
        lock.withLock { if detector == nil { detector = isEventLoopThread } }
    }

    /// Whether the calling thread is an event loop's, by the installed detector.
    public static var onEventLoop: Bool {
        lock.withLock { detector }?() ?? false
    }

    private static let poolKey = "apnsctl.BlockingWork.pool"

    /// Runs `body` as work of a pool that exists for blocking work (PushStore's
    /// `BlockingPool`): ``check(_:)`` lets it block there.
    public static func onPool<T>(_ body: () throws -> T) rethrows -> T {
        let thread = Thread.current
        let outer = thread.threadDictionary[poolKey]
        thread.threadDictionary[poolKey] = true
        defer { thread.threadDictionary[poolKey] = outer }
        return try body()
    }

    /// Whether the calling thread is running work of a pool for blocking work.
    public static var isOnPool: Bool {
        Thread.current.threadDictionary[poolKey] as? Bool == true
    }

    /// Whether the calling thread runs a Swift task (Swift's shared pool of as many threads as
    /// cores, or a task's executor) rather than a thread of its own.
    public static var inSwiftTask: Bool {
        withUnsafeCurrentTask { $0 != nil }
    }

    /// Stops a debug build when `what` (work that can block) is about to run on an event loop,
    /// or inside a Swift task off a pool for blocking work (where it would hold one of the few
    /// threads every task shares).
    public static func check(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        assert(!onEventLoop, "\(what()) would block an event loop; run it on a thread pool", file: file, line: line)
        assert(
            !inSwiftTask || isOnPool,
            "\(what()) would block a thread of Swift's shared pool; run it on a pool for blocking work",
            file: file,
            line: line
        )
    }
}
