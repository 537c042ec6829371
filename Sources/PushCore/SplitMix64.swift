/// The one seedable generator for what must repeat under a seed and need not be secret: the bulk
/// engine's back-off jitter and `apns-id`s, the local gateway's fault rolls. A seed makes a run
/// repeatable in tests; nothing secret is ever drawn from it.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in [0, 1): the top 53 bits, as many as a Double holds exactly.
    package mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
