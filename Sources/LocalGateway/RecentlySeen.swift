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

/// Sixteen random bytes at a time from a pool refilled from the system's generator.
struct RandomPool {
    private var pool: [(UInt64, UInt64)] = []

    mutating func next() -> (UInt64, UInt64) {
        if pool.isEmpty {
            pool = Array(repeating: (0, 0), count: 256)
            // One read for the lot (SystemRandomNumberGenerator makes a system call per number).
            let handle = FileHandle(forReadingAtPath: "/dev/urandom")
            let bytes = (try? handle?.read(upToCount: pool.count * 16)) ?? nil
            try? handle?.close()
            if let bytes, bytes.count == pool.count * 16 {
                pool.withUnsafeMutableBytes { $0.copyBytes(from: bytes) }
            } else {
                var generator = SystemRandomNumberGenerator()
                pool = pool.map { _ in (generator.next(), generator.next()) }
            }
        }
        return pool.removeLast()
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
