import CredentialFormats
import Foundation
import PushCore

/// Reads the store's index as apnsctl writes it, without `JSONDecoder`.
///
/// Every command that uses a stored credential reads the index first, and a cold `send` waits
/// for it: the credential's secret is looked up by what the index says of it. `JSONDecoder`
/// checks each type it decodes against several protocols at run time, and the first check of a
/// type searches every protocol conformance in the program: about a tenth of a millisecond
/// each, some twenty of them, on the path of every cold command (docs/performance.md).
///
/// This reader takes exactly the shape ``ReportSchema/encoder()`` writes (snake_case keys,
/// ISO 8601 dates) and nothing else: any other key, a duplicate key, a value of another type, a
/// missing field or a date it cannot read makes it return nil, and the caller decodes with
/// `JSONDecoder`, which then either accepts the file (an index edited by hand, in a form that
/// decoder also takes) or says what is wrong with it. So what is accepted, and every error
/// message, stays the decoder's. ``StoreIndexReaderTests`` holds the two to the same result.
package enum StoreIndexReader {
    /// The index in `bytes`: read directly when it has the shape apnsctl writes, by
    /// `JSONDecoder` otherwise (whose error is the one thrown).
    package static func index(_ bytes: [UInt8]) throws -> StoreIndex {
        if let index = decode(bytes) { return index }
        return try ReportSchema.decoder().decode(StoreIndex.self, from: Data(bytes))
    }

    static func decode(_ bytes: [UInt8]) -> StoreIndex? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONReader(buffer)
            guard let value = parser.document() else { return nil }
            return index(value)
        }
    }

    // MARK: The index's shape

    private static func index(_ value: JSONValue) -> StoreIndex? {
        guard let fields = value.fields(allowed: ["schema_version", "credentials", "requests"]),
            let version = fields["schema_version"]?.integer,
            case .array(let credentialValues)? = fields["credentials"]
        else { return nil }
        var index = StoreIndex()
        index.schemaVersion = version
        var credentials: [StoredCredential] = []
        credentials.reserveCapacity(credentialValues.count)
        for credentialValue in credentialValues {
            guard let credential = credential(credentialValue) else { return nil }
            credentials.append(credential)
        }
        index.credentials = credentials
        switch fields["requests"] {
        case nil, .null?:
            index.requests = nil
        case .array(let requestValues)?:
            var requests: [PendingRequest] = []
            for requestValue in requestValues {
                guard let request = request(requestValue) else { return nil }
                requests.append(request)
            }
            index.requests = requests
        default:
            return nil
        }
        return index
    }

    private static let credentialKeys: Set<String> = [
        "alias", "kind", "topics", "environments", "imported_at", "source", "secret", "bundle_file",
        "certificate_file", "sha256", "subject", "team_id", "not_before", "not_after", "key_id",
        "public_key_fingerprint",
    ]

    private static func credential(_ value: JSONValue) -> StoredCredential? {
        guard let fields = value.fields(allowed: credentialKeys),
            let alias = fields["alias"]?.string,
            let kind = fields["kind"]?.string.flatMap(CredentialKind.init(rawValue:)),
            let topics = fields["topics"]?.strings,
            let environmentNames = fields["environments"]?.strings,
            let importedAt = fields["imported_at"]?.date,
            let secret = fields["secret"]?.string.flatMap(SecretItem.Kind.init(rawValue:))
        else { return nil }
        var environments: [PushEnvironment] = []
        for name in environmentNames {
            guard let environment = PushEnvironment(rawValue: name) else { return nil }
            environments.append(environment)
        }
        guard let source = fields.optionalString("source"),
            let bundleFile = fields.optionalString("bundle_file"),
            let certificateFile = fields.optionalString("certificate_file"),
            let sha256 = fields.optionalString("sha256"),
            let subject = fields.optionalString("subject"),
            let teamID = fields.optionalString("team_id"),
            let notBefore = fields.optionalDate("not_before"),
            let notAfter = fields.optionalDate("not_after"),
            let keyID = fields.optionalString("key_id"),
            let publicKeyFingerprint = fields.optionalString("public_key_fingerprint")
        else { return nil }
        return StoredCredential(
            alias: alias,
            kind: kind,
            topics: topics,
            environments: environments,
            importedAt: importedAt,
            source: source,
            secret: secret,
            bundleFile: bundleFile,
            certificateFile: certificateFile,
            sha256: sha256,
            subject: subject,
            teamID: teamID,
            notBefore: notBefore,
            notAfter: notAfter,
            keyID: keyID,
            publicKeyFingerprint: publicKeyFingerprint
        )
    }

    private static let requestKeys: Set<String> = [
        "alias", "public_key_fingerprint", "subject", "key_type", "requested_at", "request_file", "alias_chosen",
    ]

    private static func request(_ value: JSONValue) -> PendingRequest? {
        guard let fields = value.fields(allowed: requestKeys),
            let alias = fields["alias"]?.string,
            let fingerprint = fields["public_key_fingerprint"]?.string,
            let subject = fields["subject"]?.string,
            let keyType = fields["key_type"]?.string,
            let requestedAt = fields["requested_at"]?.date,
            let requestFile = fields.optionalString("request_file"),
            case .bool(let aliasChosen)? = fields["alias_chosen"]
        else { return nil }
        return PendingRequest(
            alias: alias,
            publicKeyFingerprint: fingerprint,
            subject: subject,
            keyType: keyType,
            requestedAt: requestedAt,
            requestFile: requestFile,
            aliasChosen: aliasChosen
        )
    }
}

/// A JSON value as the index reader needs it.
private enum JSONValue {
    case string(String)
    /// A number's text, as written.
    case number(String)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

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
        return PushTime.utcTimestamp(text) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    /// An object's fields by key: nil for another value, a key not in `allowed`, or a key twice.
    func fields(allowed: Set<String>) -> [String: JSONValue]? {
        guard case .object(let pairs) = self else { return nil }
        var fields: [String: JSONValue] = [:]
        fields.reserveCapacity(pairs.count)
        for (key, value) in pairs {
            guard allowed.contains(key), fields.updateValue(value, forKey: key) == nil else { return nil }
        }
        return fields
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// Absent or null: `.some(nil)`; a string: `.some(text)`; anything else: nil.
    fileprivate func optionalString(_ key: String) -> String?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        default: return nil
        }
    }

    fileprivate func optionalDate(_ key: String) -> Date?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case let value?: return value.date.map { .some($0) }
        }
    }
}

/// A strict JSON (RFC 8259) reader over bytes; nil at the first thing that is not JSON.
private struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// Objects and arrays inside one another; the index is three deep.
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func document() -> JSONValue? {
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

    private mutating func value() -> JSONValue? {
        skipSpace()
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return nil }
        for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] { return nil }
        position += count
        return value
    }

    private mutating func number() -> JSONValue? {
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

    private mutating func array() -> JSONValue? {
        var values: [JSONValue] = []
        let complete = members(closing: UInt8(ascii: "]")) { reader in
            guard let value = reader.value() else { return false }
            values.append(value)
            return true
        }
        return complete ? .array(values) : nil
    }

    private mutating func object() -> JSONValue? {
        var pairs: [(String, JSONValue)] = []
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
    private mutating func members(closing: UInt8, _ member: (inout JSONReader) -> Bool) -> Bool {
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
