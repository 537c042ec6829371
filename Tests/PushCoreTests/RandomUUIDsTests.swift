import Foundation
import Testing

@testable import PushCore

@Suite struct RandomUUIDsTests {
    @Test func theyAreVersion4UUIDsInLowerCaseThatFoundationReads() throws {
        let generator = RandomUUIDs()
        for _ in 0..<1_000 {
            let text = generator.next()
            #expect(
                text.range(
                    of: #"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"#,
                    options: .regularExpression
                ) != nil,
                "\(text)"
            )
            let parsed = try #require(UUID(uuidString: text))
            #expect(parsed.uuid.6 >> 4 == 4)
            #expect(parsed.uuid.8 >> 6 == 0b10)
        }
    }

    @Test func aRunNeverRepeatsOne() {
        let generator = RandomUUIDs()
        var seen = Set<String>()
        for _ in 0..<200_000 { seen.insert(generator.next()) }
        #expect(seen.count == 200_000)
    }

    @Test func twoGeneratorsAreSeededApart() {
        let (first, second) = (RandomUUIDs(), RandomUUIDs())
        let a = (0..<100).map { _ in first.next() }
        let b = Set((0..<100).map { _ in second.next() })
        #expect(b.isDisjoint(with: a))
    }

    @Test func theSameSeedGivesTheSameSequenceAndEveryRandomDigitVaries() {
        let seed: (UInt64, UInt64, UInt64, UInt64) = (1, 2, 3, 4)
        let (a, b) = (RandomUUIDs(seed: seed), RandomUUIDs(seed: seed))
        let first = (0..<64).map { _ in a.next() }
        #expect(first == (0..<64).map { _ in b.next() })
        // Over 64 UUIDs each of the 30 hex digits that are not fixed takes more than one value.
        let fixed: Set<Int> = [8, 13, 14, 18, 23]
        for position in 0..<36 where !fixed.contains(position) {
            let digits = Set(first.map { Array($0)[position] })
            #expect(digits.count > 1, "digit \(position) never changes")
        }
    }
}

@Suite struct JSONStringTests {
    @Test(arguments: [
        "740f4707bebcf74f", "BadDeviceToken", "", "é ✓ 日本", "a\"b", "back\\slash", "line\nbreak\r\t",
        "\u{1B}]0;title\u{07}", "\u{00}\u{1F}", "\u{7F}",
    ])
    func everyStringComesBackAsItWent(value: String) throws {
        var text = ""
        TextEncoding.appendJSONString(value, to: &text)
        let decoded = try JSONSerialization.jsonObject(with: Data("[\(text)]".utf8), options: []) as? [String]
        #expect(decoded == [value])
        #expect(!text.utf8.dropFirst().dropLast().contains { $0 < 0x20 })
    }

    @Test(arguments: [
        "740f4707bebcf74f", "BadDeviceToken", "", "é ✓ 日本", "a\"b", "back\\slash", "line\nbreak\r\t",
        "\u{1B}]0;title\u{07}", "\u{00}\u{1F}", "\u{7F}", "\u{8}\u{C}/",
    ])
    func theByteFormWritesWhatTheStringFormWrites(value: String) {
        var text = ""
        TextEncoding.appendJSONString(value, to: &text)
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        TextEncoding.appendJSONString(value, to: &bytes)
        #expect(bytes.dropFirst().elementsEqual(text.utf8), "\(String(decoding: bytes, as: UTF8.self)) vs \(text)")
    }

    @Test(arguments: [0, 7, -1, -42, 10, 99, 100, 65_535, Int.max, Int.min])
    func decimalsAreWrittenAsStringWritesThem(value: Int) {
        var bytes: [UInt8] = []
        TextEncoding.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }
}
