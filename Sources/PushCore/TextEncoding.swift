import Foundation

/// Small text encoders for paths that run once per notification (result lines, the gateway's
/// delivery record), where Foundation's formatters cost more than the rest of the work.
public enum TextEncoding {
    /// Appends `value` as a JSON string literal (RFC 8259 escaping), as `JSONSerialization`
    /// writes it with slashes unescaped: `\b` and `\f` included, other controls as `\u00xx`.
    public static func appendJSONString(_ value: String, to text: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 2)
        appendJSONString(value, to: &bytes)
        text += String(decoding: bytes, as: UTF8.self)
    }

    /// The same literal appended as UTF-8 bytes: what a file's write buffer takes without a
    /// `String` in between. The `String` form above is written from this one.
    public static func appendJSONString(_ value: String, to bytes: inout [UInt8]) {
        var value = value
        value.withUTF8 { appendJSONString(utf8: $0, to: &bytes) }
    }

    /// The literal of UTF-8 text read through a buffer pointer: a bulk run writes a few per
    /// notification, and walking `String.UTF8View` costs several times more per byte.
    private static func appendJSONString(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: utf8)
        } else {
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                case 0..<0x20:
                    let digits: StaticString = "0123456789abcdef"
                    bytes.append(contentsOf: Array("\\u00".utf8))
                    bytes.append(digits.utf8Start[Int(byte >> 4)])
                    bytes.append(digits.utf8Start[Int(byte & 0x0F)])
                default: bytes.append(byte)  // UTF-8 passes through: only ASCII controls are escaped
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `value` in decimal, as `String(value)` writes it.
    public static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            // The magnitude as unsigned: `Int.min` has no positive counterpart.
            appendDecimal(value.magnitude, to: &bytes)
        } else {
            appendDecimal(UInt(value), to: &bytes)
        }
    }

    private static func appendDecimal(_ value: UInt, to bytes: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var remaining = value
            var start = scratch.count
            repeat {
                start -= 1
                scratch[start] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            } while remaining > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[start...]))
        }
    }

    /// The 16 bytes of a UUID as `uuidString.lowercased()` writes them.
    public static func lowercaseUUID(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            for (index, byte) in bytes.prefix(16).enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = digits.utf8Start[Int(byte >> 4)]
                text[position + 1] = digits.utf8Start[Int(byte & 0x0F)]
                position += 2
            }
            return position
        }
    }

    public static func lowercaseUUID(_ id: UUID) -> String {
        withUnsafeBytes(of: id.uuid) { lowercaseUUID($0) }
    }
}
