import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a file given to the tool holds, and so how much of it is read.
///
/// Every file is read through ``InputFile/read(path:kind:)``, which stops at the kind's limit:
/// `/dev/zero`, a log given by mistake or a FIFO fed without end would otherwise be read into
/// memory whole. Each limit is far above what a real file of its kind holds and far below what
/// would strain the machine.
public struct InputKind: Sendable, Equatable {
    /// How messages name such a file ("payload", "CA bundle").
    public let name: String
    /// The most bytes read.
    public let limit: Int
    /// Why the limit is where it is, as a clause for the message.
    public let reason: String
    /// What to do when a file is past the limit.
    public let advice: String

    public init(name: String, limit: Int, reason: String, advice: String) {
        self.name = name
        self.limit = limit
        self.reason = reason
        self.advice = advice
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.limit == rhs.limit }

    /// A certificate, a PKCS#12 bundle, a private key or a signing request.
    public static let credential = InputKind(
        name: "certificate file",
        limit: 1 << 20,
        reason: "a push certificate with its key and chain takes a few kilobytes",
        advice: "Check that this is the .p12, .pem, .cer or .key file meant; a file this large is not one."
    )
    /// A token key (`AuthKey_<KEYID>.p8`).
    public static let tokenKey = InputKind(
        name: "token key",
        limit: 64 << 10,
        reason: "an AuthKey .p8 file is about 250 bytes",
        advice: "Give the AuthKey_<KEYID>.p8 file downloaded from the Apple Developer portal."
    )
    /// A public key in PEM (what a gateway checks provider tokens with).
    public static let publicKey = InputKind(
        name: "public key file",
        limit: 64 << 10,
        reason: "a P-256 public key in PEM is under 200 bytes",
        advice: "Give the P-256 public key as PEM (openssl pkey -in AuthKey_KEYID.p8 -pubout)."
    )
    /// Certificates to trust (extra roots for a server, client CAs for a gateway).
    public static let caBundle = InputKind(
        name: "CA bundle",
        limit: 8 << 20,
        reason: "a system's whole trust store is well under 1 MiB",
        advice: "Give a PEM file holding only the CA certificates to trust."
    )
    /// A notification's JSON payload, or a part of one (a Live Activity's content state).
    public static let payload = InputKind(
        name: "payload",
        limit: 64 << 10,
        reason: "APNs accepts at most 4 KB, 5 KB for VoIP",
        advice: "Give the JSON file of one notification's payload."
    )
    /// A local gateway's registry of device tokens.
    public static let deviceList = InputKind(
        name: "device list",
        limit: 32 << 20,
        reason: "about a quarter of a million devices",
        advice: "Register fewer devices: a test gateway needs only the tokens a test sends to."
    )
    /// A member's age identity (`AGE-SECRET-KEY-1…`, or an ssh private key) for a team store.
    public static let identity = InputKind(
        name: "identity file",
        limit: 64 << 10,
        reason: "an age identity is one line of 74 characters, an ssh key a few kilobytes",
        advice: "Give the file age-keygen wrote, or set APNSCTL_IDENTITY to its AGE-SECRET-KEY-1 line."
    )
    /// A team store's encrypted secret (an age file).
    public static let encryptedSecret = InputKind(
        name: "encrypted secret",
        limit: 1 << 20,
        reason: "an age file holds one password or key of a few kilobytes",
        advice: "The file was replaced outside apnsctl: restore it with git (git checkout -- secrets)."
    )
    /// The store's own records (its index and journal).
    public static let storeRecord = InputKind(
        name: "store record",
        limit: 32 << 20,
        reason: "an entry takes under 1 KiB",
        advice: "The file was replaced outside apnsctl: restore it from a backup."
    )
}

/// Reads a file the user named, with a limit on its size.
public enum InputFile {
    /// Reads `path` ("-" for standard input) to its end, or throws once `kind.limit` is passed.
    ///
    /// Through a descriptor and to the end, not by the size the file system reports: a FIFO,
    /// `<(command)` and /dev/stdin have no size and are files all the same. A path with bytes
    /// that are not UTF-8 is opened by those bytes (``RawPath``).
    public static func read(path: String, kind: InputKind) throws -> [UInt8] {
        let descriptor: Int32
        if path == "-" {
            descriptor = STDIN_FILENO
        } else {
            // Without blocking: a FIFO nobody has opened for writing would hold open(2) for ever.
            descriptor = openForReading(path, flags: O_NONBLOCK)
            if descriptor < 0 { throw openFailure(path: path, kind: kind, errno: errno) }
        }
        defer { if path != "-" { close(descriptor) } }
        return try read(descriptor: descriptor, path: path, kind: kind)
    }

    /// How long a pipe, FIFO, socket or device may take to reach its end: a regular file ends
    /// where its size says, these only when their writer closes them, which a FIFO nobody writes
    /// to, a terminal or a stalled command never does.
    public static let streamDeadline: Duration = .seconds(30)

    /// Reads an open descriptor to its end, or throws once `kind.limit` is passed or, for
    /// anything but a regular file, once ``streamDeadline`` has passed; `path` names it in
    /// messages. The caller closes it.
    public static func read(descriptor: Int32, path: String, kind: InputKind) throws -> [UInt8] {
        var status = stat()
        var regularSize: Int?
        var deadline: ContinuousClock.Instant?
        if fstat(descriptor, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR {
                throw CredentialError(
                    .isDirectory,
                    path: path,
                    "This is a folder, not a \(kind.name).",
                    hint: "Name the \(kind.name) inside it."
                )
            }
            // A regular file says its size: refused before a byte is read.
            if status.st_mode & S_IFMT == S_IFREG {
                if Int(status.st_size) > kind.limit {
                    throw tooLarge(path: path, kind: kind, size: Int(status.st_size))
                }
                regularSize = Int(status.st_size)
            }
        }
        if regularSize == nil { deadline = .now + streamDeadline }

        // Chunks, joined once at the end: a file refused at the limit never held more than the
        // limit in memory, and one read whole is copied once rather than at every doubling. Each
        // chunk is read into memory that is not zeroed first: zeroing a 256 KiB chunk for a file
        // of a few hundred bytes touched 64 pages, twice per file (the read that finds the end
        // took another), a millisecond of a cold `send` (docs/performance.md). A regular file's
        // first chunk is its size and one byte more, so one read takes it all and a small one
        // finds its end, unless it grew meanwhile.
        var chunks: [[UInt8]] = []
        var total = 0
        var chunkSize = min(regularSize.map { $0 + 1 } ?? 256 << 10, kind.limit + 1)
        while total <= kind.limit {
            if let deadline { try waitForInput(descriptor, until: deadline, path: path, kind: kind, read: total) }
            var failure: Int32 = 0
            let chunk = [UInt8](unsafeUninitializedCapacity: chunkSize) { buffer, initialized in
                var count: Int
                repeat {
                    count = systemRead(descriptor, buffer.baseAddress, buffer.count)
                } while count < 0 && errno == EINTR
                if count < 0 { failure = errno }
                initialized = max(count, 0)
            }
            // Readiness can be stale (another reader of the same pipe took the bytes): wait again.
            if failure == EAGAIN || failure == EWOULDBLOCK { continue }
            if failure != 0 {
                throw unreadable(path: path, errno: failure)
            }
            if chunk.isEmpty { break }
            chunks.append(chunk)
            total += chunk.count
            chunkSize = min(regularSize == nil ? 256 << 10 : 16 << 10, kind.limit + 1)
        }
        if total > kind.limit { throw tooLarge(path: path, kind: kind, size: nil) }
        if chunks.count == 1 { return chunks[0] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        for chunk in chunks { bytes += chunk }
        return bytes
    }

    /// Opens `path` for reading by the bytes the user gave, with `flags` added to
    /// `O_RDONLY | O_CLOEXEC`; -1 (and errno) when it cannot.
    public static func openForReading(_ path: String, flags: Int32 = 0) -> Int32 {
        withRawPath(path) { open($0, O_RDONLY | O_CLOEXEC | flags) }
    }

    /// Calls `body` with `path` as the C string of the bytes the user gave (``RawPath``).
    private static func withRawPath<Result>(_ path: String, _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (RawPath.bytes(path) + [0]).withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }

    /// Waits until `descriptor` has bytes (or its end) to read, or throws once `deadline` has
    /// passed: the one wait of a read that is not of a regular file.
    static func waitForInput(
        _ descriptor: Int32,
        until deadline: ContinuousClock.Instant,
        path: String,
        kind: InputKind,
        read total: Int
    ) throws {
        do throws(WaitFailure) {
            if try waitUntilReadable(descriptor, until: deadline) { return }
        } catch {
            throw unreadable(path: path, errno: error.code)
        }
        throw stalled(path: path, kind: kind, read: total)
    }

    /// What poll(2) failed with.
    package struct WaitFailure: Error {
        package var code: Int32
    }

    /// Waits until `descriptor` has bytes (or its end) to read: false when `deadline` passed
    /// first.
    package static func waitUntilReadable(
        _ descriptor: Int32,
        until deadline: ContinuousClock.Instant
    ) throws(WaitFailure) -> Bool {
        while true {
            let left = deadline - .now
            let milliseconds = max(
                0,
                left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
            )
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(clamping: milliseconds))
            if ready > 0 { return true }
            if ready == 0 { return false }
            if errno != EINTR { throw WaitFailure(code: errno) }
        }
    }

    static func stalled(path: String, kind: InputKind, read total: Int) -> CredentialError {
        let seconds = streamDeadline.components.seconds
        let source = path == "-" ? "standard input" : "this pipe, FIFO or device"
        let what =
            total == 0
            ? "Nothing came from \(source) in \(seconds) seconds"
            : "The \(kind.name) from \(source) did not end within \(seconds) seconds (\(describe(size: total)) came)"
        return CredentialError(
            .unreadable,
            path: path,
            "\(what): apnsctl waits at most \(seconds) seconds for a \(kind.name) that is not a regular file to end.",
            hint: path == "-"
                ? "Give the \(kind.name)'s path instead of -, or feed standard input from a file or a command that ends."
                : "Give the \(kind.name) as a regular file, or make sure the command writing to the FIFO writes it whole and closes it."
        )
    }

    /// Whether `path` names something that exists, asked by the bytes the user gave.
    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return withRawPath(path) { stat($0, &status) == 0 }
    }

    /// A size as people read it: "64 KiB", "8 MiB".
    public static func describe(size: Int) -> String {
        if size >= 1 << 20, size % (1 << 20) == 0 { return "\(size >> 20) MiB" }
        if size >= 1 << 10, size % (1 << 10) == 0 { return "\(size >> 10) KiB" }
        return "\(size.formatted(.number.grouping(.automatic))) bytes"
    }

    static func tooLarge(path: String, kind: InputKind, size: Int?) -> CredentialError {
        let limit = describe(size: kind.limit)
        let message =
            size.map {
                "This \(kind.name) is \(describe(size: $0)), more than the \(limit) apnsctl reads of a \(kind.name) (\(kind.reason))."
            } ?? "This \(kind.name) goes on past \(limit), the most apnsctl reads of a \(kind.name) (\(kind.reason))."
        return CredentialError(.fileTooLarge, path: path, message, hint: kind.advice)
    }

    package static func openFailure(path: String, kind: InputKind, errno code: Int32) -> CredentialError {
        if code == ENOENT || code == ENOTDIR {
            return CredentialError.fileNotFound(path: path)
        }
        return unreadable(path: path, errno: code)
    }

    /// A file that exists but cannot be read, in the system's words for `code` (`strerror`).
    package static func unreadable(path: String, errno code: Int32) -> CredentialError {
        CredentialError(
            .unreadable,
            path: path,
            "The file cannot be read (\(String(cString: strerror(code)))).",
            hint: "Check its permissions (ls -l) and that it is not locked by another program."
        )
    }
}

/// The C library's read(2), which `InputFile`'s and `PasswordSource`'s own `read` hide.
func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
