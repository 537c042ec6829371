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
