import Foundation
import PushCore
import Testing

/// Hex text written directly must read exactly as `String(format:)` wrote it before: the
/// fingerprints and key IDs in reports, JSON and metrics are compared as text.
struct HexTextTests {
    @Test func everyByteReadsAsStringFormatWroteIt() {
        let bytes = (0...255).map(UInt8.init)
        #expect(HexText.of(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(
            HexText.of(bytes, uppercase: true, separator: ":")
                == bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
        )
    }

    @Test func noBytesIsNoText() {
        #expect(HexText.of([UInt8]()).isEmpty)
        #expect(HexText.of([0x0A], separator: ":") == "0a")
    }
}
