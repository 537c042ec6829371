import CredentialFormats
import Foundation

/// A JSON value as the index reader needs it.
enum IndexJSON {
    case string(String)
    /// A number's text, as written.
    case number(String)
    case bool(Bool)
    case null
    case array([IndexJSON])
    case object([(String, IndexJSON)])

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var strings: [String]? {
        guard case .array(let values) = self else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(values.count)
        for value in values {
            guard case .string(let text) = value else { return nil }
            strings.append(text)
        }
        return strings
    }

    var integer: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    var date: Date? {
        guard case .string(let text) = self else { return nil }
        return ReportSchema.date(from: text)  // the decoder's own rule
    }

    /// An object's fields by key: nil for another value, a key not in `allowed`, or a key twice.
    func fields(allowed: Set<String>) -> [String: IndexJSON]? {
        guard case .object(let pairs) = self else { return nil }
        var fields: [String: IndexJSON] = [:]
        fields.reserveCapacity(pairs.count)
        for (key, value) in pairs {
            guard allowed.contains(key), fields.updateValue(value, forKey: key) == nil else { return nil }
        }
        return fields
    }
}

extension Dictionary where Key == String, Value == IndexJSON {
    /// Absent or null: `.some(nil)`; a string: `.some(text)`; anything else: nil.
    func optionalString(_ key: String) -> String?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        default: return nil
        }
    }

    func optionalDate(_ key: String) -> Date?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case let value?: return value.date.map { .some($0) }
        }
    }
}

/// A strict JSON (RFC 8259) reader over bytes; nil at the first thing that is not JSON.
struct IndexJSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// Objects and arrays inside one another; the index is three deep.
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func document() -> IndexJSON? {
        guard let value = value() else { return nil }
        skipSpace()
        return position == bytes.count ? value : nil
    }

    private mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func value() -> IndexJSON? {
        skipSpace()
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(IndexJSON.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString, _ value: IndexJSON) -> IndexJSON? {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return nil }
        for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] { return nil }
        position += count
        return value
    }

    private mutating func number() -> IndexJSON? {
        let start = position
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let digitsStart = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            position += 1
        }
        // Integers only, without leading zeros: the index holds no other number.
        guard position > digitsStart, bytes[digitsStart] != UInt8(ascii: "0") || position == digitsStart + 1 else {
            return nil
        }
        if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
            return nil
        }
        return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self))
    }

    private mutating func array() -> IndexJSON? {
        var values: [IndexJSON] = []
        let complete = members(closing: UInt8(ascii: "]")) { reader in
            guard let value = reader.value() else { return false }
            values.append(value)
            return true
        }
        return complete ? .array(values) : nil
    }

    private mutating func object() -> IndexJSON? {
        var pairs: [(String, IndexJSON)] = []
        let complete = members(closing: UInt8(ascii: "}")) { reader in
            reader.skipSpace()
            guard reader.next(is: UInt8(ascii: "\"")), let key = reader.string() else { return false }
            reader.skipSpace()
            guard reader.next(is: UInt8(ascii: ":")) else { return false }
            reader.position += 1
            guard let value = reader.value() else { return false }
            pairs.append((key, value))
            return true
        }
        return complete ? .object(pairs) : nil
    }

    private func next(is byte: UInt8) -> Bool { position < bytes.count && bytes[position] == byte }

    /// Reads an array's or an object's members, the reader on its opening bracket: `member`
    /// reads one, and says whether it could. False for anything that is not JSON.
    private mutating func members(closing: UInt8, _ member: (inout IndexJSONReader) -> Bool) -> Bool {
        guard depth < 16 else { return false }
        depth += 1
        defer { depth -= 1 }
        position += 1  // [ or {
        skipSpace()
        if next(is: closing) {
            position += 1
            return true
        }
        while true {
            guard member(&self) else { return false }
            skipSpace()
            guard position < bytes.count else { return false }
            let separator = bytes[position]
            position += 1
            if separator == closing { return true }
            guard separator == UInt8(ascii: ",") else { return false }
        }
    }

    /// A string literal, the reader on its opening quote.
    private mutating func string() -> String? {
        position += 1  // "
        let start = position
        // Most strings have no escape: taken whole.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                return String(validating: text, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }
            position += 1
        }
        var text = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    text.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                text.append(byte)
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (a surrogate pair when it is one), the reader after the `u`.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hexQuad() else { return nil }
        if (0xD800..<0xDC00).contains(high) {
            guard position + 2 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u")
            else { return nil }
            position += 2
            guard let low = hexQuad(), (0xDC00..<0xE000).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        }
        return Unicode.Scalar(high)
    }

    private mutating func hexQuad() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            position += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
