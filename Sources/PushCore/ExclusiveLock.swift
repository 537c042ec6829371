/// What one try at a lock found: the lock is had, or someone else has it (named where that is
/// known: "process 1234", "host pid 1234").
public enum LockTry<Held: Sendable>: Sendable {
    case acquired(Held)
    case busy(holder: String?)
}

/// What waiting for a lock came to: had (with whoever held it while this waited, if anyone
/// did), or not had by the deadline (with who held it then, where that is known).
public enum LockWait<Held: Sendable>: Sendable {
    case acquired(Held, waitedFor: String?)
    case timedOut(holder: String?)
}

/// A lock that keeps other holders out while it is held: a folder's `flock` (a store's, a bulk
/// run's results file), Vault's check-and-set lock entry. Each says how to try once and how to
/// let go, and what not having it in time is; how to wait is the same for all
/// (``acquire(waitingUpTo:backoff:)``, ``withLock(waitingUpTo:backoff:_:)``): try, and between tries
/// `Task.sleep` with a backoff that doubles up to a bound, until the deadline. A try never
/// blocks its thread, so a waiting caller holds no thread at all.
public protocol ExclusiveLock: Sendable {
    /// What a holder keeps until it lets go.
    associatedtype Held: Sendable

    /// One try, at once: the lock had, or who has it.
    func tryAcquire() async throws -> LockTry<Held>

    /// Lets go of a lock this holder has.
    func release(_ held: Held) async

    /// The error of a caller that did not have the lock in time, naming who holds it where
    /// that is known (the module's own error, in its own words).
    func busy(holder: String?) -> any Error
}

/// The pauses between tries at a lock: doubling from `first` up to `longest`.
public struct LockBackoff: Sendable {
    public var first: Duration
    public var longest: Duration

    public init(first: Duration = .milliseconds(10), longest: Duration = .milliseconds(200)) {
        self.first = first
        self.longest = longest
    }
}

extension ExclusiveLock {
    /// Tries until the lock is had or `wait` has passed (a zero wait tries once). A cancelled
    /// task stops waiting with `CancellationError`.
    public func acquire(
        waitingUpTo wait: Duration,
        backoff: LockBackoff = LockBackoff()
    ) async throws -> LockWait<Held> {
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        var pause = backoff.first
        var waitedFor: String?
        while true {
            switch try await tryAcquire() {
            case .acquired(let held):
                return .acquired(held, waitedFor: waitedFor)
            case .busy(let holder):
                waitedFor = holder ?? waitedFor
                let now = clock.now
                guard now < deadline else { return .timedOut(holder: waitedFor) }
                try await Task.sleep(until: min(now + pause, deadline), clock: clock)
                pause = min(pause * 2, backoff.longest)
            }
        }
    }

    /// Runs `body` holding the lock, waiting for it up to `wait`; lets go however `body` ends.
    /// When the lock is not had by then, throws ``busy(holder:)``. `body` is told who held the
    /// lock while this waited.
    public func withLock<R>(
        waitingUpTo wait: Duration,
        backoff: LockBackoff = LockBackoff(),
        _ body: (_ held: Held, _ waitedFor: String?) async throws -> R
    ) async throws -> R {
        switch try await acquire(waitingUpTo: wait, backoff: backoff) {
        case .timedOut(let holder):
            throw busy(holder: holder)
        case .acquired(let held, let waitedFor):
            let result: R
            do {
                result = try await body(held, waitedFor)
            } catch {
                await release(held)
                throw error
            }
            await release(held)
            return result
        }
    }
}
