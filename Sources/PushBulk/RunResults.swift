import CredentialFormats
import Foundation
import PushCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The results files of one run, read back: one file, or the files of the run's shards (each
/// with its own header, stop and end records and journal). ``open(_:)`` refuses files of
/// different runs, naming what differs as a resume does; ``forEachResult(_:)`` reads every
/// result line of every file, in constant memory whatever their size.
public struct RunResults: Sendable {
    /// One results file, as a resume of it would find it.
    public struct File: Sendable {
        /// The path as it was given.
        public let path: String
        /// The run as it started: the file's first header (nil when its results were printed to
        /// standard output, with no header).
        public let header: BulkRunHeader?
        /// The shard the file holds; nil for a whole run.
        public let shard: RunShard?
        /// What the file and its journal say (its last header, stop or end record, what was in
        /// flight): read by the reader a resume uses.
        public let state: ResumeState
        /// The process writing this file now ("process 1234"): a run or a resume in progress.
        public let writer: String?
    }

    public let files: [File]

    /// Reads the files at `paths` (a path given twice, or two names of one file, counts once)
    /// and checks that they are one run: the same notification, credential, gateway and token
    /// file, and either one file or the files of one run's shards (the same number of shards).
    /// Throws ``BulkRunError`` when a file cannot be read, is not a results file, or belongs to
    /// another run than the first.
    public static func open(_ paths: [String]) throws -> RunResults {
        var files: [File] = []
        var seen: Set<[UInt64]> = []
        for path in paths {
            let identity = try fileIdentity(path)
            guard seen.insert(identity).inserted else { continue }
            files.append(try read(path))
        }
        if files.count > 1 {
            for file in files where file.header == nil { throw BulkRunError.noRunHeaderToCompare(path: file.path) }
        }
        if let first = files.first, let reference = first.header {
            for file in files.dropFirst() {
                guard let header = file.header else { continue }
                // Shards of one run differ in K alone: their N is compared below.
                var sameShard = header
                sameShard.shard = reference.shard
                var differences = reference.differences(from: sameShard)
                if let then = reference.tokensFingerprint, let now = header.tokensFingerprint, then != now {
                    differences.append("the token file")
                }
                if first.shard?.n != file.shard?.n {
                    let said = { (shard: RunShard?) in shard.map { "shard \($0)" } ?? "a whole run" }
                    differences.append("the shards (\(said(first.shard)) there, \(said(file.shard)) here)")
                }
                if !differences.isEmpty {
                    throw BulkRunError.runsDiffer(path: file.path, first: first.path, differences: differences)
                }
            }
        }
        return RunResults(files: files)
    }

    /// Calls `body` with every result line of every file, in file order: the header, stop and
    /// end records are not results, and a last line cut short (a run writing now, or killed
    /// mid-write) is left out as a resume leaves it out.
    public func forEachResult(_ body: (File, BulkResult.Recorded) throws -> Void) throws {
        let decoder = JSONDecoder()
        for file in files {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file.path), options: .alwaysMapped)
            } catch {
                throw BulkRunError.resultsCannotBeRead(path: file.path, reason: AppendFile.describe(error))
            }
            try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                guard let base = raw.baseAddress else { return }
                var start = 0
                var number = 0
                while start < raw.count {
                    // A line's end found by memchr: a file of millions of lines is read at its speed.
                    guard let found = memchr(base + start, Int32(UInt8(ascii: "\n")), raw.count - start) else { break }
                    let newline = base.distance(to: UnsafeRawPointer(found))
                    number += 1
                    let record = UnsafeRawBufferPointer(start: base + start, count: newline - start)
                    start = newline + 1
                    if record.isEmpty || record.starts(with: #"{"run":"#.utf8) || record.starts(with: #"{"stop":"#.utf8)
                        || record.starts(with: #"{"end":"#.utf8)
                    {
                        continue
                    }
                    guard let result = BulkResult.parse(record, using: decoder) else {
                        throw BulkRunError.notAResultLine(path: file.path, number: number)
                    }
                    try body(file, result)
                }
            }
        }
    }

    /// One file: its first header and shard, the state a resume reads, and who writes it now.
    private static func read(_ path: String) throws -> File {
        let probe: FileLock
        do {
            // Opened read-only and never locked: a run that starts meanwhile is not refused.
            probe = try FileLock(path: path, mode: .shared) { _ in
                BulkRunError.resultsCannotBeRead(path: path, reason: "")
            }
        } catch .open(let code), .lock(let code) {
            throw BulkRunError.resultsCannotBeRead(path: path, reason: AppendFile.describe(Errno(rawValue: code)))
        }
        defer { probe.close() }
        let writer = probe.holder()
        let (header, shard) = try head(path)
        let state = try ResumeState.load(resultsPath: path)
        return File(path: path, header: header, shard: shard, state: state, writer: writer)
    }

    /// The run header on the file's first line, with its shard (nil, nil when the first line is
    /// not a header).
    private static func head(_ path: String) throws -> (BulkRunHeader?, RunShard?) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BulkRunError.resultsCannotBeRead(path: path, reason: "it cannot be opened")
        }
        defer { try? handle.close() }
        // A header holds the options as given: an alert text can be long, never a MiB.
        let start = (try? handle.read(upToCount: 1 << 20)) ?? Data()
        let line = start.prefix { $0 != UInt8(ascii: "\n") }
        guard let header = BulkRunHeader.parse(line) else { return (nil, nil) }
        return (header, header.shard)
    }

    /// The file's device and inode, so that one file given twice (or by two names) counts once;
    /// refuses what is not a regular file.
    private static func fileIdentity(_ path: String) throws -> [UInt64] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw BulkRunError.resultsCannotBeRead(path: path, reason: AppendFile.describe(Errno(rawValue: errno)))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let what = (info.st_mode & S_IFMT) == S_IFDIR ? "it is a folder" : "it is not a regular file"
            throw BulkRunError.resultsCannotBeRead(path: path, reason: what)
        }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }
}
