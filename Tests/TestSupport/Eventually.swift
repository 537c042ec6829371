import Foundation

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout` seconds; true
/// when it came. For what a test must wait for before its next step (a GOAWAY arriving, a
/// request reaching the gateway) on machines busy enough that a fixed sleep is sometimes short.
/// The bound only ends a hung test: it is generous, and it measures nothing.
@discardableResult
public func eventually(timeout: TimeInterval = 60, _ condition: () -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { return false }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    return true
}
