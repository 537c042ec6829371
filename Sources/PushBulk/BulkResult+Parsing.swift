import Foundation
import PushCore

/// Reading back what ``BulkResult/jsonLine`` wrote: a resumed run needs each result's line and
/// which token it answers, for a million lines, so this reads the fixed prefix the writer puts
/// first rather than decoding every line.
extension BulkResult {
    /// What a resume matches results by: a 64-bit hash of the token (of the line's text for a
    /// malformed line, which has no token).
    public static func key(token hex: String) -> UInt64 { hash(hex, seed: 0xcbf2_9ce4_8422_2325) }
    public static func key(malformedText text: String) -> UInt64 { hash(text, seed: 0x9e37_79b9_7f4a_7c15) }

    /// FNV-1a over the text's UTF-8, read from its contiguous storage (a token file's every line
    /// goes through here; walking `String.UTF8View` byte by byte costs several times more).
    private static func hash(_ text: String, seed: UInt64) -> UInt64 {
        var text = text
        return text.withUTF8 { bytes in
            var value = seed
            for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return value
        }
    }

    /// `{"line":N,"token":"...",...}` → N and the key of what it answers; nil when the record is
    /// not a result line.
    static func parseKey(_ record: some Collection<UInt8>) -> (line: Int, key: UInt64)? {
        let bytes = Array(record)
        let linePrefix = Array(#"{"line":"#.utf8)
        guard bytes.count > linePrefix.count, bytes.starts(with: linePrefix) else { return nil }
        var index = linePrefix.count
        var line = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            line = line * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
            if line > 1_000_000_000 { return nil }
        }
        guard line > 0 else { return nil }
        let tokenPrefix = Array(#","token":""#.utf8)
        guard bytes[index...].starts(with: tokenPrefix) else { return nil }
        index += tokenPrefix.count
        guard let close = bytes[index...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        // Results written before errors became objects said `"error":"malformed_token"`.
        let malformed = "\"" + BulkResultCode.malformedToken.rawValue + "\""
        if text.contains(#""error":{"code":"# + malformed) || text.contains(#""error":"# + malformed) {
            // The text may hold escaped characters: decode this (rare) line in full.
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let token = object["token"] as? String
            else { return nil }
            return (line, key(malformedText: token))
        }
        return (line, key(token: String(decoding: bytes[index..<close], as: UTF8.self)))
    }
}

extension BulkResult {
    /// A result line read back whole, as the writer wrote it (``BulkResult/jsonLine``): what
    /// `results summary` and `results tokens` count and list. Codes and reasons stay the strings
    /// the file holds, so that a file written by a later version (a code this one does not know)
    /// is still counted, by its own word.
    public struct Recorded: Sendable, Equatable {
        public var line: Int
        /// The token as lower-case hex; for a malformed line, the line's text.
        public var token: String
        public var status: Int?
        /// APNs' reason, as written (`Unregistered`).
        public var reason: String?
        public var apnsID: String?
        public var attempts: Int
        public var uncertain: Bool
        public var uncertainBecause: String?
        /// For 410 Unregistered: when APNs says the token stopped being valid, as written
        /// (RFC 3339 in UTC, with milliseconds).
        public var timestamp: String?
        /// `error.code`, when no answer was final (`timeout`, `outcome_unknown`...).
        public var error: String?
        public var message: String?

        public var isAccepted: Bool { status == 200 }
    }

    /// `{"line":N,"token":…}` in full; nil when the record is not a result line (a run header,
    /// a stop or end record, or not one of these at all).
    public static func parse(_ record: some Collection<UInt8>, using decoder: JSONDecoder = JSONDecoder()) -> Recorded?
    {
        let bytes = Array(record)
        guard bytes.starts(with: Array(#"{"line":"#.utf8)) else { return nil }
        return parsePlainAccepted(bytes) ?? decode(bytes, using: decoder)
    }

    /// The whole line through the JSON decoder.
    static func decode(_ bytes: [UInt8], using decoder: JSONDecoder) -> Recorded? {
        guard let line = try? decoder.decode(RecordedLine.self, from: Data(bytes)) else { return nil }
        return Recorded(
            line: line.line,
            token: line.token,
            status: line.status,
            reason: line.reason,
            apnsID: line.apnsID,
            attempts: line.attempts,
            uncertain: line.uncertain ?? false,
            uncertainBecause: line.uncertainBecause,
            timestamp: line.timestamp,
            error: line.error?.code,
            message: line.error?.message
        )
    }

    /// Most lines of a run are the writer's plain accepted line, with nothing optional after
    /// `attempts`: `{"line":N,"token":"HEX","status":200,"reason":null,"apns_id":"UUID","attempts":N}`.
    /// Read at its fixed places, as ``parseKey(_:)`` reads a line's prefix, it costs a fraction
    /// of a decoder's pass (a summary of tens of millions of lines is mostly these); anything
    /// else, or anything unexpected in it, is nil and goes through the decoder.
    static func parsePlainAccepted(_ bytes: [UInt8]) -> Recorded? {
        var index = 0
        func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
            index += count
            return true
        }
        func number() -> Int? {
            var value = 0
            let start = index
            while index < bytes.count, index - start < 10,
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
            {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            return index > start ? value : nil
        }
        /// Lower-case hex digits and `-` only: nothing a JSON string would escape.
        func plainText() -> String? {
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                let byte = bytes[index]
                guard
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                        || byte == UInt8(ascii: "-")
                else { return nil }
                index += 1
            }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }
        guard literal(#"{"line":"#), let line = number(), line > 0, literal(#","token":""#), let token = plainText(),
            literal(#"","status":200,"reason":null,"apns_id":""#), let apnsID = plainText(),
            literal(#"","attempts":"#), let attempts = number(), literal("}"), index == bytes.count
        else { return nil }
        return Recorded(
            line: line,
            token: token,
            status: 200,
            reason: nil,
            apnsID: apnsID,
            attempts: attempts,
            uncertain: false,
            uncertainBecause: nil,
            timestamp: nil,
            error: nil,
            message: nil
        )
    }

    /// The keys ``appendJSONLine(to:)`` writes, by their names in the file.
    private struct RecordedLine: Decodable {
        var line: Int
        var token: String
        var status: Int?
        var reason: String?
        var apnsID: String?
        var attempts: Int
        var uncertain: Bool?
        var uncertainBecause: String?
        var timestamp: String?
        var error: RecordedError?

        enum CodingKeys: String, CodingKey {
            case line, token, status, reason, attempts, uncertain, timestamp, error
            case apnsID = "apns_id"
            case uncertainBecause = "uncertain_because"
        }
    }

    /// The error object `{code, message}`, or the bare code older files wrote.
    private struct RecordedError: Decodable {
        var code: String
        var message: String?

        private enum Keys: String, CodingKey { case code, message }

        init(from decoder: any Decoder) throws {
            if let code = try? decoder.singleValueContainer().decode(String.self) {
                self.code = code
                return
            }
            let container = try decoder.container(keyedBy: Keys.self)
            code = try container.decode(String.self, forKey: .code)
            message = try container.decodeIfPresent(String.self, forKey: .message)
        }
    }
}
