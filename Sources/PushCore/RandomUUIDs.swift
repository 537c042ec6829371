/// Random (version 4, RFC 9562) UUIDs for `apns-id`, without a system call each.
///
/// Foundation's `UUID()` on Linux reads /dev/urandom for every UUID: an open, a read and a close
/// per notification, a cost a bulk run felt (docs/performance.md). An `apns-id` must be unique, not secret, so
/// the 122 random bits come from xoshiro256** seeded once from the system's generator; its
/// period (2^256 - 1) means a run never repeats one, and two runs collide no more often than
/// two random 122-bit values.
public final class RandomUUIDs: @unchecked Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    public init() {
        var system = SystemRandomNumberGenerator()
        var seed = (system.next() as UInt64, system.next() as UInt64, system.next() as UInt64, system.next() as UInt64)
        // xoshiro's state must not be all zero.
        if seed == (0, 0, 0, 0) { seed.0 = 0x9E37_79B9_7F4A_7C15 }
        state = seed
    }

    /// A fixed seed, for tests.
    init(seed: (UInt64, UInt64, UInt64, UInt64)) { state = seed }

    /// The next UUID in lower case (`8-4-4-4-12` hex digits). Not thread-safe: one per owner.
    public func next() -> String {
        var high = nextWord()
        var low = nextWord()
        high = (high & ~0xF000) | 0x4000  // version 4 in bits 48-51 (the 13th hex digit)
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // variant 10x in the top bits of byte 8
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: &bytes) { TextEncoding.lowercaseUUID($0) }
    }

    private func nextWord() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}
