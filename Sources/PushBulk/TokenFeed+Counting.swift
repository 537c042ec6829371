import CredentialFormats
import Foundation

/// What a token file holds before it is read for sending: the lines a progress bar counts, and
/// what places a line in a shard (the same for the count and for the reader).
extension TokenFeed {
    /// Counts the lines that hold something other than a comment (the total a progress bar
    /// shows), those of `shard` alone when given, for a regular file; nil for a pipe. Reads
    /// the file once, in constant memory.
    public static func countEntries(path: String, shard: RunShard? = nil) -> Int? {
        // Only a regular file has an end to count to: a pipe, a FIFO or a device such as
        // /dev/zero would be read for ever.
        guard path != "-",
            (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular,
            let handle = FileHandle(forReadingAtPath: path)
        else { return nil }
        defer { try? handle.close() }
        if let shard { return countEntries(handle, shard: shard) }
        var count = 0
        var lineHasContent = false
        var inComment = false
        while let data = try? handle.read(upToCount: 1 << 20), !data.isEmpty {
            data.withUnsafeBytes { raw in
                for byte in raw {
                    switch byte {
                    case UInt8(ascii: "\n"):
                        if lineHasContent { count += 1 }
                        lineHasContent = false
                        inComment = false
                    case UInt8(ascii: "#"):
                        inComment = true
                    case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                        break
                    default:
                        if !inComment { lineHasContent = true }
                    }
                }
            }
        }
        if lineHasContent { count += 1 }
        return count
    }

    /// Counts the lines of `shard`, placed as the reader places them (``placement(of:)``).
    private static func countEntries(_ handle: FileHandle, shard: RunShard) -> Int {
        var count = 0
        var line: [UInt8] = []
        func endLine() {
            if line.count > maximumLineLength {
                if shard.holds(line: Array(preview(line).utf8)) { count += 1 }
            } else if let placed = placement(of: line[...]), shard.holds(line: placed) {
                count += 1
            }
            line.removeAll(keepingCapacity: true)
        }
        while let data = try? handle.read(upToCount: 1 << 20), !data.isEmpty {
            for byte in data {
                if byte == UInt8(ascii: "\n") {
                    endLine()
                } else if line.count <= maximumLineLength {
                    line.append(byte)
                }
            }
        }
        if !line.isEmpty { endLine() }
        return count
    }

    /// What places a line in a shard: its token's lower-case hex when the line holds a token
    /// (so that the same token lands in the same shard however it is written), else its text
    /// without the comment and the surrounding spaces; nil for a line of nothing but those.
    static func placement(of line: ArraySlice<UInt8>) -> [UInt8]? {
        guard let text = content(of: line) else { return nil }
        if let token = DeviceToken(plainHex: text) ?? (try? DeviceToken(String(decoding: text, as: UTF8.self))) {
            return Array(token.hex.utf8)
        }
        return Array(text)
    }

    /// A line without its comment and the spaces around what is left; nil when nothing is.
    static func content(of line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var end = line.firstIndex(of: UInt8(ascii: "#")) ?? line.endIndex
        var start = line.startIndex
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        return start < end ? line[start..<end] : nil
    }
}
