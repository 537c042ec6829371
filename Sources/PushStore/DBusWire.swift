/// The D-Bus wire format's marshalling: ``DBusWriter`` writes values (``DBusValue``) in
/// little-endian order, ``DBusReader`` reads them back in either byte order, checking every
/// length, padding and nesting against the bytes received (``DBusMessage`` frames them).

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
