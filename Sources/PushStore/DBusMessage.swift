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
