import CredentialFormats
import Foundation
import NIOConcurrencyHelpers
import PushCore
import PushGateway
import SystemPackage

/// Reads a token file (or standard input) on a thread of its own and hands lines over in
/// batches, so that neither a slow pipe nor a large file ever blocks the connection's event
/// loop, and memory stays constant: at most ``capacity`` entries wait at any time.
///
/// Lines: one token each, in any form ``DeviceToken`` accepts; blank lines and `#` comments
/// (whole-line or trailing) are skipped. Line numbers count every line, from 1, so they match
/// what an editor shows.
public final class TokenFeed: @unchecked Sendable {
    /// Longest line read as a token; longer ones are reported malformed without being kept.
    public static let maximumLineLength = 1_024
    /// The length at which a line with no end stops the read: far beyond any token file's line.
    static let endlessLine = 1 << 20

    private struct Shared {
        var ready: [TokenEntry] = []
        var finished = false
        var stopped = false
        var wantsWake = false
        var readError: String?
        var linesRead = 0
        var entriesRead = 0
        var skipped = 0
        var duplicates = 0
    }

    private let descriptor: FileDescriptor
    private let ownsDescriptor: Bool
    private let resume: ResumeState?
    private let capacity: Int
    private let allowDuplicates: Bool
    /// The shard whose lines this feed hands over; nil for every line.
    private let shard: RunShard?
    /// Tokens met so far (with the ones earlier runs finished or had in flight): a token listed
    /// twice is sent once. Eight bytes a token.
    private var seen = Set<UInt64>()
    private let shared = NIOLockedValueBox(Shared())
    private let space = NSCondition()
    private var wake: (@Sendable () -> Void)?

    /// Reads `descriptor` (closed at the end when `ownsDescriptor`); lines with a final
    /// answer in `resume` are skipped.
    /// A token listed again is skipped (counted in ``duplicates``) unless `allowDuplicates`.
    /// With `shard`, only the lines of that shard are read as entries (``RunShard/holds(line:)``);
    /// the others are passed over as blank lines are.
    public init(
        descriptor: FileDescriptor,
        ownsDescriptor: Bool,
        resume: ResumeState? = nil,
        allowDuplicates: Bool = false,
        shard: RunShard? = nil,
        capacity: Int = 8_192
    ) {
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
        self.resume = resume
        self.allowDuplicates = allowDuplicates
        self.shard = shard
        self.capacity = capacity
    }

    /// Opens a token file, or standard input for "-".
    public static func open(
        path: String,
        resume: ResumeState? = nil,
        allowDuplicates: Bool = false,
        shard: RunShard? = nil
    ) throws -> TokenFeed {
        if path == "-" {
            // Tokens typed at a terminal would wait silently for end of input; a resume
            // printed for a pipe would look like it hangs.
            if isatty(FileDescriptor.standardInput.rawValue) == 1 {
                throw BulkRunError.terminalInput()
            }
            return TokenFeed(
                descriptor: .standardInput,
                ownsDescriptor: false,
                resume: resume,
                allowDuplicates: allowDuplicates,
                shard: shard
            )
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw CredentialError.fileNotFound(
                path: path,
                "The token file does not exist.",
                hint: "Check the path, or read the tokens from standard input."
            )
        }
        if isFolder.boolValue {
            throw CredentialError(
                .isDirectory,
                path: path,
                "This is a folder, not a token file.",
                hint: "Give the file that lists the tokens."
            )
        }
        do {
            let descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
            return TokenFeed(
                descriptor: descriptor,
                ownsDescriptor: true,
                resume: resume,
                allowDuplicates: allowDuplicates,
                shard: shard
            )
        } catch {
            throw CredentialError(
                .unreadable,
                path: path,
                "The token file cannot be opened (\(AppendFile.describe(error))).",
                hint: "Check its permissions."
            )
        }
    }

    /// Starts reading. `wake` is called (from the reader thread) when entries arrive after a
    /// ``take()`` found none.
    public func start(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
        let thread = Thread { [self] in readAll() }
        thread.name = "bulk token reader"
        thread.start()
    }

    /// Takes every entry read so far without waiting. `finished` is true once the input is
    /// exhausted (or reading stopped) and nothing is left.
    public func take() -> (entries: [TokenEntry], finished: Bool) {
        let result: ([TokenEntry], Bool) = shared.withLockedValue { shared in
            let entries = shared.ready
            shared.ready = []
            shared.ready.reserveCapacity(256)
            if entries.isEmpty && !shared.finished { shared.wantsWake = true }
            return (entries, entries.isEmpty && shared.finished)
        }
        if !result.0.isEmpty {
            space.lock()
            space.signal()
            space.unlock()
        }
        return result
    }

    /// Stops reading; lines not yet read are left for a later run.
    public func stop() {
        shared.withLockedValue { $0.stopped = true }
        space.lock()
        space.broadcast()
        space.unlock()
    }

    /// Why reading ended early, when it did (an I/O error).
    public var readError: String? { shared.withLockedValue { $0.readError } }

    /// Lines holding something (a token or not), blank lines and comments aside.
    public var entriesRead: Int { shared.withLockedValue { $0.entriesRead } }
    /// Lines skipped because an earlier run has their token's result.
    public var skipped: Int { shared.withLockedValue { $0.skipped } }
    /// Lines skipped because an earlier line has the same token.
    public var duplicates: Int { shared.withLockedValue { $0.duplicates } }

    // MARK: The reader thread

    private func readAll() {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var line: [UInt8] = []
        line.reserveCapacity(Self.maximumLineLength)
        var lineNumber = 0
        var overlong = false
        // Bytes of the current line, kept or dropped: a line that never ends (binary data,
        // /dev/zero) stops the read rather than spinning through it for ever.
        var lineBytes = 0
        var batch: [TokenEntry] = []
        batch.reserveCapacity(256)
        var failure: String?

        func endLine() {
            lineNumber += 1
            if let entry = entry(line: line, number: lineNumber, overlong: overlong) { batch.append(entry) }
            line.removeAll(keepingCapacity: true)
            overlong = false
            lineBytes = 0
        }

        reading: while !isStopped {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            } catch {
                failure = "reading the tokens failed (\(AppendFile.describe(error)))"
                break
            }
            if count == 0 { break }
            var first = 0
            if lineNumber == 0, line.isEmpty, count >= 3, chunk[0] == 0xEF, chunk[1] == 0xBB, chunk[2] == 0xBF {
                first = 3  // a UTF-8 byte order mark, as some editors write: not part of line 1
            }
            for index in first..<count {
                let byte = chunk[index]
                if byte == UInt8(ascii: "\n") {
                    endLine()
                    if batch.count >= 256 {
                        guard hand(&batch) else { break reading }
                    }
                } else if line.count < Self.maximumLineLength {
                    line.append(byte)
                } else {
                    overlong = true
                    lineBytes += 1
                    if lineBytes > Self.endlessLine {
                        failure =
                            "line \(lineNumber + 1) has no end within its first MiB, so this is not a file of device tokens, one per line (binary data, or a device such as /dev/zero)"
                        break reading
                    }
                }
            }
            // A slow pipe: pass on what came rather than wait for a full batch.
            if !batch.isEmpty { guard hand(&batch) else { break } }
        }
        if !isStopped, failure == nil, !line.isEmpty || overlong {
            endLine()
        }
        if !isStopped, failure == nil, let resume {
            // Read to the end: what an earlier run had in flight and the file no longer holds
            // is reported, not forgotten.
            for flight in resume.inFlight.values.sorted(by: { $0.line < $1.line })
            where !seen.contains(BulkResult.key(token: flight.token)) {
                batch.append(
                    .vanished(line: flight.line, token: flight.token, apnsID: flight.apnsID, attempts: flight.attempts)
                )
            }
        }
        if !batch.isEmpty { _ = hand(&batch) }
        if ownsDescriptor { try? descriptor.close() }
        let lines = lineNumber
        let counted = counts
        shared.withLockedValue {
            $0.entriesRead = counted.entries
            $0.skipped = counted.skipped
            $0.duplicates = counted.duplicates
            $0.finished = true
            $0.readError = failure
            $0.linesRead = lines
        }
        notify(force: true)
    }

    private var isStopped: Bool { shared.withLockedValue { $0.stopped } }

    /// Moves a batch to the shared queue, waiting while it is full. False when stopped.
    private func hand(_ batch: inout [TokenEntry]) -> Bool {
        space.lock()
        while true {
            let (full, stopped) = shared.withLockedValue { ($0.ready.count >= capacity, $0.stopped) }
            if stopped {
                space.unlock()
                return false
            }
            if !full { break }
            _ = space.wait(until: Date().addingTimeInterval(0.05))
        }
        space.unlock()
        let counted = counts
        shared.withLockedValue {
            $0.ready.append(contentsOf: batch)
            $0.entriesRead = counted.entries
            $0.skipped = counted.skipped
            $0.duplicates = counted.duplicates
        }
        batch.removeAll(keepingCapacity: true)
        notify(force: false)
        return true
    }

    private func notify(force: Bool) {
        let call = shared.withLockedValue { shared -> Bool in
            let call = shared.wantsWake || force
            shared.wantsWake = false
            return call
        }
        if call { wake?() }
    }

    /// Turns one line into an entry; nil for blank lines, comments, lines already answered and
    /// tokens already met.
    private func entry(line: [UInt8], number: Int, overlong: Bool) -> TokenEntry? {
        if overlong {
            let text = Self.preview(line)
            if let shard, !shard.holds(line: Array(text.utf8)) { return nil }
            count { $0.entries += 1 }
            if resume?.isDone(malformedText: text) == true {
                count { $0.skipped += 1 }
                return nil
            }
            return .malformed(
                line: number,
                text: text,
                message: "The line is longer than \(Self.maximumLineLength) bytes; a device token is 64 hex digits."
            )
        }
        guard let text = Self.content(of: line[...]) else { return nil }
        var token = DeviceToken(plainHex: text)
        var problem: String?
        if token == nil {
            do {
                token = try DeviceToken(String(decoding: text, as: UTF8.self))
            } catch {
                problem = (error as? PushCoreError)?.message ?? "This is not a device token."
            }
        }
        if let shard, !shard.holds(line: token.map { Array($0.hex.utf8) } ?? Array(text)) { return nil }
        count { $0.entries += 1 }
        guard let token else {
            let preview = Self.preview(text)
            if resume?.isDone(malformedText: preview) == true {
                count { $0.skipped += 1 }
                return nil
            }
            return .malformed(line: number, text: preview, message: problem ?? "This is not a device token.")
        }
        let key = BulkResult.key(token: token.hex)
        if seen.contains(key) {
            if !allowDuplicates {
                count { $0.duplicates += 1 }
                return nil
            }
        } else if resume != nil || !allowDuplicates {
            seen.insert(key)
        }
        switch resume?.status(key: key) ?? .pending {
        case .done:
            count { $0.skipped += 1 }
            return nil
        case .uncertain(let apnsID, let attempts):
            return .uncertain(line: number, token: token, apnsID: apnsID, attempts: attempts)
        case .pending:
            return .token(line: number, token: token)
        }
    }

    /// Counts kept by the reader thread alone and published with each batch (one lock a batch,
    /// not one a line).
    private var counts = (entries: 0, skipped: 0, duplicates: 0)

    private func count(_ change: (inout (entries: Int, skipped: Int, duplicates: Int)) -> Void) { change(&counts) }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    /// At most 100 characters of a bad line, for the report.
    static func preview(_ bytes: some Collection<UInt8>) -> String {
        let text = String(decoding: bytes.prefix(100), as: UTF8.self)
        return bytes.count > 100 ? text + "…" : text
    }
}
