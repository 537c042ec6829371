import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout` seconds; true
/// when it came. For what a test must wait for before its next step (a GOAWAY arriving, a
/// request reaching the gateway) on machines busy enough that a fixed sleep is sometimes short.
/// The bound only ends a hung test: it is generous, and it measures nothing.
@discardableResult
public func eventually(timeout: TimeInterval = 60, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while try await !condition() {
        guard Date() < deadline else { return false }
        try await Task.sleep(nanoseconds: Eventually.interval)
    }
    return true
}

/// `eventually` for a test or helper that runs on a thread of its own (a synchronous test, a
/// child program's watcher): the thread sleeps between checks.
@discardableResult
public func waitUntil(timeout: TimeInterval = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    try waitForValue(timeout: timeout) { try condition() ? true : nil } ?? false
}

/// Waits, as `waitUntil` does, until `produce` gives a value (a port a server wrote, an
/// answer's line); nil when none came within `timeout` seconds.
public func waitForValue<T>(timeout: TimeInterval = 60, _ produce: () throws -> T?) rethrows -> T? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let value = try produce() { return value }
        guard Date() < deadline else { return nil }
        usleep(useconds_t(Eventually.interval / 1_000))
    }
}

enum Eventually {
    /// How long a wait sleeps between two checks, in nanoseconds.
    static let interval: UInt64 = 20_000_000
}
