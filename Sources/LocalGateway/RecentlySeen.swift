import Crypto
import Foundation
import NIOConcurrencyHelpers
import PushCredentials

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

/// A small seeded generator so fault runs repeat.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
