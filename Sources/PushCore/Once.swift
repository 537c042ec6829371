import Foundation

/// A value settled exactly once, from any thread: the first ``complete(_:)`` (or
/// ``value(computing:)``) wins and later ones are ignored. Waiters, callbacks and awaiting tasks
/// all see that one value.
///
/// The one "happens once" primitive of the project: a promise that a timeout and an answer race
/// to complete, a completion that a stream and its failed opening both call, a continuation
/// that two signals race to resume, standard input that several files need.
public final class Once<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var settled: Value?
    private var callbacks: [(Value) -> Void] = []

    public init() {}

    /// Settles the value; returns false (and changes nothing) when it was already settled.
    @discardableResult
    public func complete(_ value: Value) -> Bool {
        lock.lock()
        guard settled == nil else {
            lock.unlock()
            return false
        }
        settled = value
        let waiting = callbacks
        callbacks = []
        lock.unlock()
        for callback in waiting { callback(value) }
        return true
    }

    public var isCompleted: Bool { lock.withLock { settled != nil } }

    /// Runs `callback` with the value once it is settled (at once when it already is).
    public func whenComplete(_ callback: @escaping (Value) -> Void) {
        lock.lock()
        if let settled {
            lock.unlock()
            callback(settled)
            return
        }
        callbacks.append(callback)
        lock.unlock()
    }

    /// The value, computed by the first caller if nobody settled it yet. Callers that come
    /// while it is being computed wait for it.
    public func value(computing compute: () -> Value) -> Value {
        lock.lock()
        defer { lock.unlock() }
        if let settled { return settled }
        let value = compute()
        settled = value
        return value
    }

    /// Waits for the value.
    public var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                whenComplete { continuation.resume(returning: $0) }
            }
        }
    }
}

extension Once {
    /// The value of a settled `Result`, or its error.
    public func get<Success: Sendable>() async throws -> Success where Value == Result<Success, any Error> {
        try await value.get()
    }
}
