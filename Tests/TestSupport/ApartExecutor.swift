import Dispatch

/// Runs a test's awaited steps on a thread of their own instead of Swift's shared pool.
///
/// The shared pool has one thread per core, and the suites running beside a test block some of
/// them (a child process waited for, a server stopped). A step that resumes after an answer then
/// waits its turn for a thread, and a test that bounds how long the code took (an error within
/// 5 s) measures that wait too. Inside ``measuredApart(_:)`` the resumptions land on this
/// executor's own thread, so the duration is the code's and the network's.
@available(macOS 15.0, *)
public final class ApartExecutor: TaskExecutor, @unchecked Sendable {
    // A serial queue runs on a thread outside the shared pool, added when it has work.
    private let queue = DispatchQueue(label: "apnsctl.tests.apart")

    public init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Runs `body` with ``ApartExecutor`` as its preferred executor: what it awaits resumes on that
/// executor's thread, never queued behind other suites' work on the shared pool.
@available(macOS 15.0, *)
public func measuredApart<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(ApartExecutor()) { try await body() }
}
