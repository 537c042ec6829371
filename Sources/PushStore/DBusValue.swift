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
