import Foundation
import PushCredentials
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a previous run left: lines with a final result (skipped), and lines it had sent
/// without recording an answer (uncertain), read from the results file and its journal.
public final class ResumeState: Sendable {
    public enum LineStatus: Equatable {
        case pending
        case done
        case uncertain(apnsID: UUID, attempts: Int)
        case mismatch
    }

    /// Per line: 0 when the line has no final result, else a hash of its token (1 for lines
    /// that were malformed). Four bytes a line: 4 MB for a million tokens.
    private let done: [UInt32]
    private let uncertainLines: [Int: (UUID, Int)]
    /// Lines with a final result.
    public let finalCount: Int
    /// Byte length of the results file up to its last complete line (a line torn by a crash is
    /// dropped, and the file is cut there before appending).
    public let validLength: Int
    /// How many lines the journal says were in flight when the previous run stopped.
    public var uncertainCount: Int { uncertainLines.count }

    /// The run the results belong to (nil in a results file that has no header line).
    public let header: BulkRunHeader?

    init(done: [UInt32], uncertain: [Int: (UUID, Int)], finalCount: Int, validLength: Int, header: BulkRunHeader?) {
        self.header = header
        self.done = done
        self.uncertainLines = uncertain
        self.finalCount = finalCount
        self.validLength = validLength
    }

    public func status(line: Int, token: DeviceToken?) -> LineStatus {
        if line < done.count, done[line] != 0 {
            guard let token else { return .done }
            let expected = done[line]
            return expected == 1 || expected == Self.hash(token.hex.utf8) ? .done : .mismatch
        }
        if let (apnsID, attempts) = uncertainLines[line] { return .uncertain(apnsID: apnsID, attempts: attempts) }
        return .pending
    }

    /// The journal that belongs to a results file.
    public static func journalPath(forResults path: String) -> String { path + ".journal" }

    /// Reads a results file written by `apnsctl send --tokens` and, when it exists, its journal.
    public static func load(resultsPath path: String) throws -> ResumeState {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw CredentialError(
                .fileNotFound,
                path: path,
                "The results file to resume cannot be read.",
                hint: "Give the results file of the run to continue."
            )
        }
        var done: [UInt32] = []
        var finalCount = 0
        var validLength = 0
        var header: BulkRunHeader?
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            var lineNumber = 0
            while start < bytes.count {
                guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { break }  // torn: ignore
                lineNumber += 1
                let record = UnsafeBufferPointer(rebasing: bytes[start..<newline])
                if lineNumber == 1, let found = BulkRunHeader.parse(record) {
                    header = found
                } else if !record.isEmpty {
                    guard let (line, tokenHash) = parse(record) else {
                        throw CredentialError(
                            .corrupt,
                            path: path,
                            "Line \(lineNumber) is not a result line of a bulk run.",
                            hint: "Give the results file of the run to continue, unchanged."
                        )
                    }
                    if line >= done.count {
                        done += [UInt32](repeating: 0, count: max(line + 1 - done.count, done.count))
                    }
                    if done[line] == 0 { finalCount += 1 }
                    done[line] = tokenHash
                }
                start = newline + 1
                validLength = start
            }
        }
        var uncertain: [Int: (UUID, Int)] = [:]
        let journal = journalPath(forResults: path)
        if let text = try? String(contentsOfFile: journal, encoding: .utf8) {
            for record in text.split(separator: "\n") {
                let fields = record.split(separator: " ")
                guard fields.count >= 2, let line = Int(fields[1]), line > 0 else { continue }
                let isDone = line < done.count && done[line] != 0
                if fields[0] == "S", fields.count >= 4, let apnsID = UUID(uuidString: String(fields[2])),
                    let attempt = Int(fields[3])
                {
                    if !isDone { uncertain[line] = (apnsID, attempt) }
                } else if fields[0] == "C" {
                    uncertain[line] = nil
                }
            }
        }
        return ResumeState(
            done: done,
            uncertain: uncertain,
            finalCount: finalCount,
            validLength: validLength,
            header: header
        )
    }

    /// `{"line":N,"token":"...",...}` → N and the token's hash (1 for malformed lines).
    private static func parse(_ record: UnsafeBufferPointer<UInt8>) -> (Int, UInt32)? {
        let linePrefix = Array(#"{"line":"#.utf8)
        guard record.count > linePrefix.count, record.starts(with: linePrefix) else { return nil }
        var index = linePrefix.count
        var line = 0
        while index < record.count, let digit = record[index].asciiDigit {
            line = line * 10 + digit
            index += 1
            if line > 100_000_000 { return nil }
        }
        guard line > 0 else { return nil }
        let tokenPrefix = Array(#","token":""#.utf8)
        guard record[index...].starts(with: tokenPrefix) else { return nil }
        index += tokenPrefix.count
        guard let close = record[index...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        let token = record[index..<close]
        // Results written before errors became objects said `"error":"malformed_token"`.
        let text = record.count > 24 ? String(decoding: record, as: UTF8.self) : ""
        let malformed =
            text.contains(#""error":{"code":"malformed_token""#) || text.contains(#""error":"malformed_token""#)
        return (line, malformed ? 1 : hash(token))
    }

    /// FNV-1a, never 0 or 1 (those mean "not done" and "malformed").
    static func hash(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var value: UInt32 = 2_166_136_261
        for byte in bytes { value = (value ^ UInt32(byte)) &* 16_777_619 }
        return value < 2 ? value + 2 : value
    }
}

extension UInt8 {
    fileprivate var asciiDigit: Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) ? Int(self - UInt8(ascii: "0")) : nil
    }
}

/// An append-only file written in large pieces: the results, or the journal. Data reaches the
/// kernel at each ``flush()``, so a killed process loses only what was not yet flushed.
public final class AppendFile: @unchecked Sendable {
    public let path: String?
    private let descriptor: FileDescriptor
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    /// The first write error; nothing more is written after it.
    public private(set) var failure: String?

    init(descriptor: FileDescriptor, path: String?, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.ownsDescriptor = ownsDescriptor
        buffer.reserveCapacity(1 << 16)
    }

    /// Standard output (results with --json).
    public static var standardOutput: AppendFile {
        AppendFile(descriptor: .standardOutput, path: nil, ownsDescriptor: false)
    }

    /// Opens `path` for appending (made 0600 when new). `truncateTo` cuts a torn last line first;
    /// `exclusive` refuses an existing file.
    public static func open(path: String, truncateTo length: Int? = nil, exclusive: Bool = false) throws -> AppendFile {
        var options: FileDescriptor.OpenOptions = [.create, .append, .closeOnExec]
        if exclusive { options.insert(.exclusiveCreate) }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                FilePath(path),
                .writeOnly,
                options: options,
                permissions: [.ownerReadWrite]
            )
        } catch Errno.fileExists {
            throw CredentialError(
                .invalidArgument,
                path: path,
                "The results file already exists.",
                hint: "Continue that run, or choose another results file."
            )
        } catch {
            throw CredentialError(
                .writeFailed,
                path: path,
                "The file cannot be opened for writing (\(Self.describe(error))).",
                hint: "Check the folder exists and is writable."
            )
        }
        if let length {
            do {
                try descriptor.resize(to: Int64(length))
            } catch {
                try? descriptor.close()
                throw CredentialError(
                    .writeFailed,
                    path: path,
                    "The results file cannot be repaired (\(Self.describe(error))).",
                    hint: "Check the file is writable."
                )
            }
        }
        return AppendFile(descriptor: descriptor, path: path, ownsDescriptor: true)
    }

    public func append(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= 1 << 16 { flush() }
    }

    public var hasPending: Bool { !buffer.isEmpty }

    public func flush() {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil else { return }
        do {
            _ = try descriptor.writeAll(buffer)
        } catch {
            failure = Self.describe(error)
        }
    }

    /// Flushes and forces the data to disk.
    public func sync() {
        flush()
        #if canImport(Glibc) || canImport(Darwin)
        if failure == nil, path != nil, fsync(descriptor.rawValue) != 0 {
            failure = Self.describe(Errno(rawValue: errno))
        }
        #endif
    }

    public func close() {
        sync()
        if ownsDescriptor { try? descriptor.close() }
    }

    /// "No space left on device", without the type's own decoration.
    static func describe(_ error: any Error) -> String {
        if let errno = error as? Errno {
            switch errno {
            case .noSpace: return "no space left on the device"
            case .fileTooLarge: return "the file is larger than this process may write"
            case .permissionDenied: return "permission denied"
            case .noSuchFileOrDirectory: return "no such file or folder"
            default: return String(describing: errno)
            }
        }
        return String(describing: error)
    }
}

/// Where a bulk run's results and journal go. Loop-confined, like the sender.
///
/// The journal holds a line `S <line> <apns-id> <attempt>` for every send before it happens and
/// `C <line>` when a line turned out not to be processed; a line with an `S` and neither a
/// result nor a later `C` was in flight when the run stopped.
public final class BulkOutput: @unchecked Sendable {
    let results: AppendFile
    let journal: AppendFile?

    /// `journal` nil: no crash protection (results on standard output).
    public init(results: AppendFile, journal: AppendFile?) {
        self.results = results
        self.journal = journal
    }

    func record(_ result: BulkResult) { results.append(result.jsonLine) }
    func journalSend(line: Int, apnsID: String, attempt: Int) { journal?.append("S \(line) \(apnsID) \(attempt)\n") }
    func journalClear(line: Int) { journal?.append("C \(line)\n") }
    func flushJournal() { journal?.flush() }
    func flushResults() { results.flush() }

    var resultsFailure: String? { results.failure.map { "\($0)" } }
    var journalFailure: String? { journal?.failure }
    var failure: String? { results.failure ?? journal?.failure }

    /// Closes both; a run that ended with every line done no longer needs its journal.
    func finish(clean: Bool) {
        results.close()
        journal?.close()
        if clean, results.failure == nil, let path = journal?.path {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
