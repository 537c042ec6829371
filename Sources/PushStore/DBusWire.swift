/// The D-Bus wire format (the D-Bus Specification, "Message Protocol"): the values of its type
/// system marshalled and unmarshalled in either byte order, and messages framed with their
/// header fields. Enough for a client's method calls and the answers to them; Unix file
/// descriptors (`h`) are not carried.
///
/// Reading is defensive: every length, offset, alignment padding, nesting depth and string is
/// checked against the bytes received and the specification's limits, and anything that does
/// not hold throws ``DBusWireError``; a message from a confused or hostile peer is refused, never
/// read past its end.
enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An array of bytes (`ay`), kept as bytes.
    case bytes([UInt8])
    /// An array of any other element type, given by its signature.
    indirect case array(element: String, [DBusValue])
    indirect case dictEntry(DBusValue, DBusValue)
    indirect case structure([DBusValue])
    indirect case variant(DBusValue)

    /// The value's signature (one complete type).
    var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// A dictionary of strings (`a{ss}`), in key order so that the bytes do not depend on hashing.
    static func stringDictionary(_ entries: [String: String]) -> DBusValue {
        .array(
            element: "{ss}",
            entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) }
        )
    }

    var stringValue: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    var elements: [DBusValue]? {
        switch self {
        case .array(_, let elements), .structure(let elements): elements
        default: nil
        }
    }
}

struct DBusWireError: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The specification's limits.
enum DBusLimits {
    static let maximumArrayLength = 64 << 20
    static let maximumMessageLength = 128 << 20
    static let maximumSignatureLength = 255
    /// Arrays and structures may each nest 32 deep; variants count toward neither, so a total
    /// is kept as well, to bound the recursion whatever a peer sends.
    static let maximumNesting = 32
    static let maximumTotalNesting = 64
}

/// Complete types within a signature.
enum DBusSignature {
    /// The complete types of `signature` in order; throws when it is not a valid signature.
    static func completeTypes(_ signature: String) throws -> [String] {
        let characters = Array(signature.utf8)
        guard characters.count <= DBusLimits.maximumSignatureLength else {
            throw DBusWireError("a signature longer than 255 bytes")
        }
        var types: [String] = []
        var index = 0
        while index < characters.count {
            let end = try completeTypeEnd(characters, from: index, arrays: 0, structures: 0)
            types.append(String(decoding: characters[index..<end], as: UTF8.self))
            index = end
        }
        return types
    }

    private static func completeTypeEnd(
        _ characters: [UInt8],
        from start: Int,
        arrays: Int,
        structures: Int
    ) throws
        -> Int
    {
        guard start < characters.count else { throw DBusWireError("a signature that ends inside a type") }
        switch characters[start] {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"),
            UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"),
            UInt8(ascii: "o"), UInt8(ascii: "g"), UInt8(ascii: "v"):
            return start + 1
        case UInt8(ascii: "a"):
            guard arrays < DBusLimits.maximumNesting else { throw DBusWireError("arrays nested too deep") }
            if start + 1 < characters.count, characters[start + 1] == UInt8(ascii: "{") {
                // A dictionary entry: a basic key, then one complete type.
                let key = start + 2
                guard key < characters.count, basicTypes.contains(characters[key]) else {
                    throw DBusWireError("a dictionary entry whose key is not a basic type")
                }
                let valueEnd = try completeTypeEnd(
                    characters,
                    from: key + 1,
                    arrays: arrays + 1,
                    structures: structures + 1
                )
                guard valueEnd < characters.count, characters[valueEnd] == UInt8(ascii: "}") else {
                    throw DBusWireError("a dictionary entry that is not closed after its value")
                }
                return valueEnd + 1
            }
            return try completeTypeEnd(characters, from: start + 1, arrays: arrays + 1, structures: structures)
        case UInt8(ascii: "("):
            guard structures < DBusLimits.maximumNesting else { throw DBusWireError("structures nested too deep") }
            var index = start + 1
            guard index < characters.count, characters[index] != UInt8(ascii: ")") else {
                throw DBusWireError("an empty structure")
            }
            while index < characters.count, characters[index] != UInt8(ascii: ")") {
                index = try completeTypeEnd(characters, from: index, arrays: arrays, structures: structures + 1)
            }
            guard index < characters.count else { throw DBusWireError("a structure that is not closed") }
            return index + 1
        default:
            throw DBusWireError("the type code 0x\(String(characters[start], radix: 16)) is not read here")
        }
    }

    private static let basicTypes: Set<UInt8> = Set("ybnqiuxtdsog".utf8)

    /// The alignment of a value of the type starting with `code`.
    static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "s"), UInt8(ascii: "o"),
            UInt8(ascii: "a"):
            4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 1
        }
    }
}

/// Marshals values in little-endian order, aligned as if the first byte were at a multiple of 8
/// (a message's start, and its body's).
struct DBusWriter {
    private(set) var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func write(_ value: DBusValue) throws {
        switch value {
        case .byte(let byte): bytes.append(byte)
        case .boolean(let flag): writeInteger(UInt32(flag ? 1 : 0))
        case .int16(let number): writeInteger(UInt16(bitPattern: number))
        case .uint16(let number): writeInteger(number)
        case .int32(let number): writeInteger(UInt32(bitPattern: number))
        case .uint32(let number): writeInteger(number)
        case .int64(let number): writeInteger(UInt64(bitPattern: number))
        case .uint64(let number): writeInteger(number)
        case .double(let number): writeInteger(number.bitPattern)
        case .string(let text), .objectPath(let text):
            let utf8 = Array(text.utf8)
            guard !utf8.contains(0) else { throw DBusWireError("a string with a NUL byte") }
            writeInteger(UInt32(utf8.count))
            bytes += utf8
            bytes.append(0)
        case .signature(let text):
            let utf8 = Array(text.utf8)
            guard utf8.count <= DBusLimits.maximumSignatureLength else {
                throw DBusWireError("a signature longer than 255 bytes")
            }
            bytes.append(UInt8(utf8.count))
            bytes += utf8
            bytes.append(0)
        case .bytes(let content):
            writeInteger(UInt32(content.count))
            bytes += content
        case .array(let element, let elements):
            pad(to: 4)
            let lengthAt = bytes.count
            bytes += [0, 0, 0, 0]
            pad(to: DBusSignature.alignment(of: element.utf8.first ?? 0))
            let start = bytes.count
            for item in elements {
                guard item.signature == element else {
                    throw DBusWireError("an array of \(element) holding a \(item.signature)")
                }
                try write(item)
            }
            let length = UInt32(bytes.count - start)
            withUnsafeBytes(of: length.littleEndian) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
        case .dictEntry(let key, let value):
            pad(to: 8)
            try write(key)
            try write(value)
        case .structure(let fields):
            pad(to: 8)
            for field in fields { try write(field) }
        case .variant(let inner):
            try write(.signature(inner.signature))
            try write(inner)
        }
    }

    private mutating func writeInteger<T: FixedWidthInteger>(_ number: T) {
        pad(to: MemoryLayout<T>.size)
        withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
    }
}

/// Unmarshals values from a received message, offsets counted from the message's first byte.
struct DBusReader {
    let bytes: [UInt8]
    let littleEndian: Bool
    var offset: Int
    /// Where this reader must stop (a message's end, or an array's).
    var limit: Int

    init(bytes: [UInt8], littleEndian: Bool, offset: Int = 0, limit: Int? = nil) {
        self.bytes = bytes
        self.littleEndian = littleEndian
        self.offset = offset
        self.limit = min(limit ?? bytes.count, bytes.count)
    }

    var atEnd: Bool { offset >= limit }

    mutating func skipPadding(to alignment: Int) throws {
        let aligned = (offset + alignment - 1) / alignment * alignment
        guard aligned <= limit else { throw DBusWireError("a value past the end of the message") }
        guard bytes[offset..<aligned].allSatisfy({ $0 == 0 }) else {
            throw DBusWireError("alignment padding that is not zero")
        }
        offset = aligned
    }

    mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws -> T {
        try skipPadding(to: MemoryLayout<T>.size)
        let size = MemoryLayout<T>.size
        guard offset + size <= limit else { throw DBusWireError("a value past the end of the message") }
        var number: T = 0
        for index in 0..<size {
            let byte = T(bytes[offset + (littleEndian ? size - 1 - index : index)])
            number = size == 1 ? byte : (number << 8) | byte
        }
        offset += size
        return number
    }

    /// One value of the complete type `type`.
    mutating func read(_ type: String, depth: Int = 0) throws -> DBusValue {
        guard depth <= DBusLimits.maximumTotalNesting else { throw DBusWireError("values nested too deep") }
        let codes = Array(type.utf8)
        guard let code = codes.first else { throw DBusWireError("an empty type") }
        switch code {
        case UInt8(ascii: "y"): return .byte(try readInteger(UInt8.self))
        case UInt8(ascii: "b"):
            switch try readInteger(UInt32.self) {
            case 0: return .boolean(false)
            case 1: return .boolean(true)
            default: throw DBusWireError("a boolean that is neither 0 nor 1")
            }
        case UInt8(ascii: "n"): return .int16(Int16(bitPattern: try readInteger(UInt16.self)))
        case UInt8(ascii: "q"): return .uint16(try readInteger(UInt16.self))
        case UInt8(ascii: "i"): return .int32(Int32(bitPattern: try readInteger(UInt32.self)))
        case UInt8(ascii: "u"): return .uint32(try readInteger(UInt32.self))
        case UInt8(ascii: "x"): return .int64(Int64(bitPattern: try readInteger(UInt64.self)))
        case UInt8(ascii: "t"): return .uint64(try readInteger(UInt64.self))
        case UInt8(ascii: "d"): return .double(Double(bitPattern: try readInteger(UInt64.self)))
        case UInt8(ascii: "s"): return .string(try readText(length: Int(try readInteger(UInt32.self))))
        case UInt8(ascii: "o"):
            let path = try readText(length: Int(try readInteger(UInt32.self)))
            guard Self.isObjectPath(path) else { throw DBusWireError("an object path that is not valid") }
            return .objectPath(path)
        case UInt8(ascii: "g"):
            let text = try readText(length: Int(try readInteger(UInt8.self)))
            _ = try DBusSignature.completeTypes(text)
            return .signature(text)
        case UInt8(ascii: "v"):
            let signature = try readText(length: Int(try readInteger(UInt8.self)))
            let types = try DBusSignature.completeTypes(signature)
            guard types.count == 1 else { throw DBusWireError("a variant whose signature is not one type") }
            return .variant(try read(types[0], depth: depth + 1))
        case UInt8(ascii: "a"):
            let length = Int(try readInteger(UInt32.self))
            guard length <= DBusLimits.maximumArrayLength else { throw DBusWireError("an array longer than 64 MiB") }
            let element = String(decoding: codes.dropFirst(), as: UTF8.self)
            try skipPadding(to: DBusSignature.alignment(of: codes[1]))
            let end = offset + length
            guard end <= limit else { throw DBusWireError("an array past the end of the message") }
            if element == "y" {
                defer { offset = end }
                return .bytes(Array(bytes[offset..<end]))
            }
            var elements: [DBusValue] = []
            let outer = limit
            limit = end
            defer { limit = outer }
            while offset < end {
                let before = offset
                elements.append(try read(element, depth: depth + 1))
                guard offset > before else { throw DBusWireError("an array element of no length") }
            }
            return .array(element: element, elements)
        case UInt8(ascii: "{"):
            try skipPadding(to: 8)
            let inner = String(decoding: codes.dropFirst().dropLast(), as: UTF8.self)
            let parts = try DBusSignature.completeTypes(inner)
            guard parts.count == 2 else { throw DBusWireError("a dictionary entry without a key and a value") }
            return .dictEntry(try read(parts[0], depth: depth + 1), try read(parts[1], depth: depth + 1))
        case UInt8(ascii: "("):
            try skipPadding(to: 8)
            let inner = String(decoding: codes.dropFirst().dropLast(), as: UTF8.self)
            return .structure(try DBusSignature.completeTypes(inner).map { try read($0, depth: depth + 1) })
        default:
            throw DBusWireError("the type code 0x\(String(code, radix: 16)) is not read here")
        }
    }

    /// `length` bytes of UTF-8 and the NUL after them.
    private mutating func readText(length: Int) throws -> String {
        guard length >= 0, offset + length < limit else { throw DBusWireError("a string past the end of the message") }
        let content = bytes[offset..<offset + length]
        guard bytes[offset + length] == 0, !content.contains(0) else {
            throw DBusWireError("a string not ended by its one NUL")
        }
        guard let text = String(validating: content, as: UTF8.self) else {
            throw DBusWireError("a string that is not UTF-8")
        }
        offset += length + 1
        return text
    }

    /// `/`, or `/`-separated elements of `[A-Za-z0-9_]`, none empty.
    static func isObjectPath(_ path: String) -> Bool {
        guard path.utf8.first == UInt8(ascii: "/") else { return false }
        if path == "/" { return true }
        let elements = path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return elements.allSatisfy { element in
            !element.isEmpty
                && element.allSatisfy { byte in
                    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                        || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                }
        }
    }
}

/// A D-Bus message: its header's fields and its body.
struct DBusMessage: Equatable, Sendable {
    enum Kind: UInt8 {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    static let noReplyExpected: UInt8 = 0x1
    static let noAutoStart: UInt8 = 0x2

    var kind: Kind
    var flags: UInt8 = 0
    var serial: UInt32
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    var sender: String?
    var body: [DBusValue] = []

    /// The message's bytes, little-endian.
    func encoded() throws -> [UInt8] {
        var bodyWriter = DBusWriter()
        for value in body { try bodyWriter.write(value) }
        var fields: [DBusValue] = []
        func field(_ code: UInt8, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(code), .variant(value)])) }
        }
        field(1, path.map(DBusValue.objectPath))
        field(2, interface.map(DBusValue.string))
        field(3, member.map(DBusValue.string))
        field(4, errorName.map(DBusValue.string))
        field(5, replySerial.map(DBusValue.uint32))
        field(6, destination.map(DBusValue.string))
        field(7, sender.map(DBusValue.string))
        if !body.isEmpty { field(8, .signature(body.map(\.signature).joined())) }
        var writer = DBusWriter()
        for byte in [UInt8(ascii: "l"), kind.rawValue, flags, 1] { try writer.write(.byte(byte)) }
        try writer.write(.uint32(UInt32(bodyWriter.bytes.count)))
        try writer.write(.uint32(serial))
        try writer.write(.array(element: "(yv)", fields))
        writer.pad(to: 8)
        let message = writer.bytes + bodyWriter.bytes
        guard message.count <= DBusLimits.maximumMessageLength else { throw DBusWireError("a message over 128 MiB") }
        return message
    }

    /// The length of the message that `prefix` (at least its first 16 bytes) starts, from its
    /// fixed header; throws when those bytes cannot start a message or it would exceed `maximum`.
    static func length(ofMessageStartingWith prefix: ArraySlice<UInt8>, maximum: Int) throws -> Int {
        let start = prefix.startIndex
        guard prefix.count >= 16 else { throw DBusWireError("a message header cut short") }
        let littleEndian: Bool
        switch prefix[start] {
        case UInt8(ascii: "l"): littleEndian = true
        case UInt8(ascii: "B"): littleEndian = false
        default: throw DBusWireError("a message that does not start with its byte order")
        }
        guard prefix[start + 3] == 1 else { throw DBusWireError("a message of protocol version \(prefix[start + 3])") }
        var reader = DBusReader(bytes: Array(prefix.prefix(16)), littleEndian: littleEndian, offset: 4)
        let bodyLength = Int(try reader.readInteger(UInt32.self))
        _ = try reader.readInteger(UInt32.self)
        let fieldsLength = Int(try reader.readInteger(UInt32.self))
        let headerLength = (16 + fieldsLength + 7) / 8 * 8
        let total = headerLength + bodyLength
        guard fieldsLength <= DBusLimits.maximumArrayLength, total <= min(maximum, DBusLimits.maximumMessageLength)
        else { throw DBusWireError("a message of \(total) bytes, more than \(maximum) are accepted") }
        return total
    }

    /// The message `bytes` holds, exactly.
    init(decoding bytes: [UInt8]) throws {
        let total = try Self.length(ofMessageStartingWith: bytes[...], maximum: DBusLimits.maximumMessageLength)
        guard total == bytes.count else { throw DBusWireError("a message whose length is not its header's") }
        var reader = DBusReader(bytes: bytes, littleEndian: bytes[0] == UInt8(ascii: "l"), offset: 1)
        guard case .byte(let rawKind) = try reader.read("y"), let kind = Kind(rawValue: rawKind) else {
            throw DBusWireError("a message of an unknown type")
        }
        self.kind = kind
        guard case .byte(let flags) = try reader.read("y") else { throw DBusWireError("no flags") }
        self.flags = flags
        reader.offset = 4
        let bodyLength = Int(try reader.readInteger(UInt32.self))
        serial = try reader.readInteger(UInt32.self)
        guard serial != 0 else { throw DBusWireError("a message with serial 0") }
        guard case .array(_, let fields) = try reader.read("a(yv)") else { throw DBusWireError("no header fields") }
        var signature = ""
        for field in fields {
            guard case .structure(let parts) = field, parts.count == 2, case .byte(let code) = parts[0],
                case .variant(let value) = parts[1]
            else { throw DBusWireError("a header field that is not a code and a variant") }
            switch (code, value) {
            case (1, .objectPath(let text)): path = text
            case (2, .string(let text)): interface = text
            case (3, .string(let text)): member = text
            case (4, .string(let text)): errorName = text
            case (5, .uint32(let number)): replySerial = number
            case (6, .string(let text)): destination = text
            case (7, .string(let text)): sender = text
            case (8, .signature(let text)): signature = text
            case (9, _): throw DBusWireError("a message that carries file descriptors")
            case (1...8, _): throw DBusWireError("header field \(code) of the wrong type")
            default: continue  // unknown fields are ignored, as the specification asks
            }
        }
        try reader.skipPadding(to: 8)
        guard reader.offset + bodyLength == bytes.count else { throw DBusWireError("a body of the wrong length") }
        body = try DBusSignature.completeTypes(signature).map { try reader.read($0) }
        guard reader.atEnd else { throw DBusWireError("bytes after the body's last value") }
    }

    init(
        kind: Kind,
        flags: UInt8 = 0,
        serial: UInt32,
        path: String? = nil,
        interface: String? = nil,
        member: String? = nil,
        errorName: String? = nil,
        replySerial: UInt32? = nil,
        destination: String? = nil,
        sender: String? = nil,
        body: [DBusValue] = []
    ) {
        self.kind = kind
        self.flags = flags
        self.serial = serial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.replySerial = replySerial
        self.destination = destination
        self.sender = sender
        self.body = body
    }
}
