import Foundation
import PushCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only file written in large pieces: the results, or the journal. Data reaches the
/// kernel at each ``flush()``, so a killed process loses only what was not yet flushed.
public final class AppendFile: @unchecked Sendable {
    public let path: String?
    let descriptor: FileDescriptor
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    /// The first write error; nothing more is written after it.
    public private(set) var failure: String?
    /// What the system said when a write failed, for the remedy (``remedy(for:)``).
    public private(set) var failureCause: Errno?
    /// Complete lines that reached the kernel: what a stop may honestly call written.
    public private(set) var linesWritten = 0
    /// Called before each write (tests make a write fail here).
    var beforeWrite: (() throws -> Void)?

    /// The file's length after its last complete line: a write cut short (a full disk) is cut
    /// back to it, so that the file never ends in half a line.
    private var completeLength: Int64 = 0
    private var length: Int64 = 0

    init(descriptor: FileDescriptor, path: String?, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.ownsDescriptor = ownsDescriptor
        buffer.reserveCapacity(1 << 16)
        var info = stat()
        if path != nil, fstat(descriptor.rawValue, &info) == 0 {
            length = Int64(info.st_size)
            completeLength = length
        }
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
            throw BulkRunError.resultsExist(path: path)
        } catch {
            throw BulkRunError.cannotOpenForWriting(path: path, reason: Self.describe(error))
        }
        if let length {
            do {
                try descriptor.resize(to: Int64(length))
            } catch {
                try? descriptor.close()
                throw BulkRunError.cannotRepair(path: path, reason: Self.describe(error))
            }
        }
        return AppendFile(descriptor: descriptor, path: path, ownsDescriptor: true)
    }

    public func append(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= 1 << 16 { flush() }
    }

    public func append(bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// Lets `write` append to the buffer in place (a result line, encoded where it lands). With
    /// `flushingWhenFull` a full buffer goes to the kernel at once, as when a `String` is
    /// appended; without, it waits for ``flush()`` (the journal commits its records in groups).
    public func append(flushingWhenFull: Bool = true, _ write: (inout [UInt8]) -> Void) {
        write(&buffer)
        if flushingWhenFull, buffer.count >= 1 << 16 { flush() }
    }

    public func flush() {
        guard !buffer.isEmpty else { return }
        defer { buffer.removeAll(keepingCapacity: true) }
        guard failure == nil else { return }
        var written = 0
        do {
            try beforeWrite?()
            // Written piece by piece so that, when the disk fills, the lines that did reach the
            // kernel are known and counted.
            try buffer.withUnsafeBytes { raw in
                while written < raw.count {
                    written += try descriptor.write(UnsafeRawBufferPointer(rebasing: raw[written...]))
                }
            }
        } catch {
            failure = Self.describe(error)
            failureCause = error as? Errno
        }
        linesWritten += buffer[..<written].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        guard path != nil else { return }
        if let end = buffer[..<written].lastIndex(of: UInt8(ascii: "\n")) { completeLength = length + Int64(end + 1) }
        length += Int64(written)
        if failure != nil, length > completeLength {
            // Shrinking needs no space: the torn line goes, and a resume finds whole lines.
            if (try? descriptor.resize(to: completeLength)) != nil { length = completeLength }
        }
    }

    /// Flushes and forces the data to disk.
    public func sync() {
        flush()
        if failure == nil, path != nil, fsync(descriptor.rawValue) != 0 {
            let cause = Errno(rawValue: errno)
            failure = Self.describe(cause)
            failureCause = cause
        }
    }

    public func close() {
        sync()
        if ownsDescriptor { try? descriptor.close() }
    }

    /// False once the file this writes to is no longer at its path (deleted or replaced):
    /// whatever is written then is lost.
    public var isStillAtPath: Bool {
        guard let path else { return true }
        var open = stat()
        var named = stat()
        guard fstat(descriptor.rawValue, &open) == 0 else { return false }
        guard stat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// "No space left on device", without the type's own decoration.
    /// What to do when a run's file could not be written, by what the system said: a full disk
    /// is not a file that may not be written.
    public static func remedy(for cause: Errno?) -> String {
        switch cause {
        case .noSpace?:
            return "Free some disk space, then continue the run."
        case .fileTooLarge?:
            return
                "Raise this process's file-size limit, or keep results on a file system that takes larger files, then continue the run."
        case .permissionDenied?, .notPermitted?, .readOnlyFileSystem?:
            return
                "Make the file writable again (it was made read-only or immutable, or its file system was mounted read-only), then continue the run."
        case .ioError?:
            return "The device reported an input/output error: check the disk, then continue the run."
        default:
            return "Fix what stopped the writes, then continue the run."
        }
    }

    public static func describe(_ error: any Error) -> String {
        if let errno = error as? Errno {
            switch errno {
            case .noSpace: return "no space left on the device"
            case .fileTooLarge: return "the file is larger than this process may write"
            case .permissionDenied: return "permission denied"
            case .notPermitted: return "operation not permitted (an immutable or append-only file?)"
            case .readOnlyFileSystem: return "the file system is read-only"
            case .noSuchFileOrDirectory: return "no such file or folder"
            default: return String(describing: errno)
            }
        }
        return String(describing: error)
    }
}
