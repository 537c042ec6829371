import Foundation

/// An APNs device token, parsed from any of the forms people paste.
///
/// Accepted: plain hex in either case (`740f4707bebc...`), hex with spaces, and the NSData
/// description old iOS code printed (`<740f4707 bebcf74f ...>`). Every token Apple has issued so
/// far is 32 bytes, but Apple says the length may change, so any even number of hex digits from 2
/// to 200 (100 bytes) is accepted; the gateway decides whether it knows the token.
public struct DeviceToken: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The largest token accepted, in bytes (Apple's documented ceiling).
    public static let maximumByteCount = 100

    /// The token's bytes.
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard !bytes.isEmpty, bytes.count <= Self.maximumByteCount else {
            throw PushCoreError(
                .invalidDeviceToken,
                "A device token has 1 to \(Self.maximumByteCount) bytes; this one has \(bytes.count).",
                hint: "Copy the token as the app printed it (64 hex digits today)."
            )
        }
        self.bytes = bytes
    }

    /// Parses a pasted token. The error says exactly what is wrong (odd length, the first
    /// character that is not hex and where it is), so a user can fix the paste.
    public init(_ text: String) throws {
        var digits: [UInt8] = []
        let characters = Array(text)
        // NSData's description wraps the hex in `<...>`: allow exactly one pair, at the ends.
        let first = characters.firstIndex { !$0.isWhitespace }
        let last = characters.lastIndex { !$0.isWhitespace }
        var skip: Set<Int> = []
        if let first, let last, first < last, characters[first] == "<", characters[last] == ">" {
            skip = [first, last]
        }
        for (index, character) in characters.enumerated() where !skip.contains(index) {
            if character.isWhitespace { continue }
            guard character.isASCII, let value = character.hexDigitValue else {
                // Positions are 1-based over the text as given: what a person counts.
                throw PushCoreError(
                    .invalidDeviceToken,
                    "The device token contains '\(character)' at position \(index + 1): a device token is hexadecimal (0-9, a-f).",
                    hint: "Copy the token again; it is 64 hex digits, optionally in <...> with spaces."
                )
            }
            digits.append(UInt8(value))
        }
        guard !digits.isEmpty else {
            throw PushCoreError(
                .invalidDeviceToken,
                "The device token is empty.",
                hint:
                    "Give the token the app received in application(_:didRegisterForRemoteNotificationsWithDeviceToken:)."
            )
        }
        guard digits.count % 2 == 0 else {
            throw PushCoreError(
                .invalidDeviceToken,
                "The device token has \(digits.count) hex digits: a device token has an even number (two per byte).",
                hint: "A digit was lost or added when copying; copy the token again."
            )
        }
        guard digits.count <= Self.maximumByteCount * 2 else {
            throw PushCoreError(
                .invalidDeviceToken,
                "The device token has \(digits.count) hex digits; at most \(Self.maximumByteCount * 2) are accepted.",
                hint: "Check that only one token was pasted."
            )
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            bytes.append(digits[index] << 4 | digits[index + 1])
        }
        self.bytes = bytes
    }

    /// Lower-case hex, as APNs expects it in the request path.
    public var hex: String {
        // Digits from a static string and bytes through a buffer pointer: a bulk send makes this
        // text for every token, and a global array's lazy start and bounds checks cost more than
        // the conversion.
        let digits: StaticString = "0123456789abcdef"
        return bytes.withUnsafeBufferPointer { bytes in
            String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
                var index = 0
                for byte in bytes {
                    buffer[index] = digits.utf8Start[Int(byte >> 4)]
                    buffer[index + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    index += 2
                }
                return index
            }
        }
    }

    public var description: String { hex }

    /// Parses plain hex (either case, nothing else) straight from bytes: the form token files
    /// nearly always hold. Returns nil for anything else, which ``init(_:)`` then explains.
    public init?(plainHex text: some Collection<UInt8>) {
        guard !text.isEmpty, text.count % 2 == 0, text.count <= Self.maximumByteCount * 2 else { return nil }
        // The digits are read through a buffer pointer: this initializer is generic and called
        // from other modules, where walking `text` itself goes through the collection's witness
        // table for every digit (a bulk send parses one token per notification).
        let bytes =
            text.withContiguousStorageIfAvailable(Self.plainHexBytes)
            ?? Array(text).withUnsafeBufferPointer(Self.plainHexBytes)
        guard let bytes else { return nil }
        self.bytes = bytes
    }

    /// The bytes of plain hex text of even length, or nil at the first character that is not hex.
    private static func plainHexBytes(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8 = 0
        var isHigh = true
        for character in text {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            if isHigh { high = value } else { bytes.append(high << 4 | value) }
            isHigh.toggle()
        }
        return bytes
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
