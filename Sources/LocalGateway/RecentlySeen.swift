import CredentialFormats
import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Answers kept by their key, with the last one used checked first: clients send the same
/// token (and often the same payload) on request after request, and comparing with the last
/// is cheaper than hashing a key of some hundred bytes into the table every time.
struct RecentlySeen<Key: Hashable, Value>: Sendable where Key: Sendable, Value: Sendable {
    private var last: (key: Key, value: Value)?
    private var all: [Key: Value] = [:]

    mutating func value(for key: Key) -> Value? {
        if let last, last.key == key { return last.value }
        guard let value = all[key] else { return nil }
        last = (key, value)
        return value
    }

    /// Keeps at most `limit` answers: the table is emptied when full (cheap, and the answers
    /// in use come back at once).
    mutating func insert(_ value: Value, for key: Key, limit: Int) {
        if all.count >= limit { all.removeAll(keepingCapacity: true) }
        all[key] = value
        last = (key, value)
    }
}
