import Foundation

/// Small text encoders for paths that run once per notification (result lines, the gateway's
/// delivery record), where Foundation's formatters cost more than the rest of the work.
public enum TextEncoding {
    /// Appends `value` as a JSON string literal (RFC 8259 escaping), as `JSONSerialization`
    /// writes it with slashes unescaped: `\b` and `\f` included, other controls as `\u00xx`.
    public static func appendJSONString(_ value: String, to text: inout String) {
        // Tokens, reasons and IDs need no escaping: appended whole, not scalar by scalar (a bulk
        // run writes a few of these per notification).
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += "\""
            text += value
            text += "\""
            return
        }
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{8}": text += "\\b"
            case "\u{C}": text += "\\f"
            case _ where scalar.value < 0x20: text += String(format: "\\u%04x", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
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
