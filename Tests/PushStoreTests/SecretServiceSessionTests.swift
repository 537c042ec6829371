import Crypto
import Testing

@testable import PushStore

/// The session's Diffie-Hellman half on its own, no Secret Service needed: two halves agree on a
/// key, fresh halves differ, and a peer value outside (1, p - 1), whose shared value an
/// eavesdropper could predict, is refused. (DirectSecretReadTests holds it to gnome-keyring.)
struct SecretServiceSessionTests {
    /// The group's prime, p = 2^1024 - 2^960 - 1 + 2^64 * (floor(2^894 pi) + 129093), written
    /// out again here so that a damaged copy in the C is caught.
    static let prime: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
        0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
        0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
        0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
        0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
        0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
        0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
        0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    ]

    /// `value` plus `delta` (which may be negative), big-endian, same length.
    static func adding(_ delta: Int, to value: [UInt8]) -> [UInt8] {
        var result = value
        var carry = delta
        for index in result.indices.reversed() where carry != 0 {
            let sum = Int(result[index]) + carry
            result[index] = UInt8(truncatingIfNeeded: sum)
            carry = sum >> 8
        }
        return result
    }

    /// Compares two big-endian values of any length.
    static func isLess(_ left: [UInt8], than right: [UInt8]) -> Bool {
        let width = max(left.count, right.count)
        let left = [UInt8](repeating: 0, count: width - left.count) + left
        let right = [UInt8](repeating: 0, count: width - right.count) + right
        return left.lexicographicallyPrecedes(right)
    }

    @Test func twoHalvesAgreeOnTheKey() throws {
        for _ in 0..<50 {
            let ours = try #require(SecretServiceSession())
            let theirs = try #require(SecretServiceSession())
            #expect(ours.publicValue != theirs.publicValue)
            #expect(ours.accept(peerValue: theirs.publicValue))
            #expect(theirs.accept(peerValue: ours.publicValue))
            let key = try #require(ours.key)
            #expect(key == theirs.key)
            #expect(key.bitCount == 128)
        }
    }

    /// A public value is 2^x mod p for a 256-bit x: never 0, 1 or p - 1, always below p,
    /// and written without leading zeros.
    @Test func thePublicValueIsInTheGroup() throws {
        for _ in 0..<200 {
            let session = try #require(SecretServiceSession())
            let value = session.publicValue
            #expect(!value.isEmpty && value.count <= 128)
            #expect(value.first != 0)
            #expect(Self.isLess(value, than: Self.adding(-1, to: Self.prime)))
            #expect(Self.isLess([1], than: value))
        }
    }

    @Test func aPeerValueAnEavesdropperCouldPredictIsRefused() throws {
        let refused: [(String, [UInt8])] = [
            ("nothing", []),
            ("zero", [0]),
            ("one", [1]),
            ("one with leading zeros", [UInt8](repeating: 0, count: 127) + [1]),
            ("p - 1", Self.adding(-1, to: Self.prime)),
            ("p", Self.prime),
            ("p + 1", Self.adding(1, to: Self.prime)),
            ("longer than p", [1] + Self.prime),
        ]
        for (name, value) in refused {
            let session = try #require(SecretServiceSession())
            #expect(!session.accept(peerValue: value), "\(name) was accepted")
            #expect(session.key == nil, "\(name) left a key")
        }
        let accepted: [(String, [UInt8])] = [
            ("two", [2]),
            ("p - 2", Self.adding(-2, to: Self.prime)),
            ("two with leading zeros", [UInt8](repeating: 0, count: 127) + [2]),
        ]
        for (name, value) in accepted {
            let session = try #require(SecretServiceSession())
            #expect(session.accept(peerValue: value), "\(name) was refused")
        }
    }
}
