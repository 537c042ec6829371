import CredentialFormats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file the store keeps, opened from inside the store's folder without following any link.
///
/// A team store's files arrive from a git remote that anyone with push access writes to, so a
/// pushed `secrets/x.age` may be a link to `~/.git-credentials` or `/proc/self/environ`. Every
/// component of the path is opened with `O_NOFOLLOW` relative to the one before it, and the file
/// opened must be a regular file (checked on the descriptor, not the name): a link, a FIFO or a
/// device is refused before a byte is read, and the message names the path inside the store only.
public enum StoreFile {
    /// Reads `relative` (a path inside `root`, with no `..`), or nil when it is not there.
    public static func readIfPresent(root: URL, relative: String, kind: InputKind) throws -> [UInt8]? {
        guard let fd = try open(root: root, relative: relative) else { return nil }
        defer { close(fd) }
        return try InputFile.read(descriptor: fd, path: relative, kind: kind)
    }

    /// Reads `relative` (a path inside `root`, with no `..`); a missing file is an error.
    public static func read(root: URL, relative: String, kind: InputKind) throws -> [UInt8] {
        guard let bytes = try readIfPresent(root: root, relative: relative, kind: kind) else {
            throw InputFile.openFailure(path: relative, kind: kind, errno: ENOENT)
        }
        return bytes
    }

    /// Whether `relative` is a regular file of the store (not a link, not a folder).
    public static func isRegularFile(root: URL, relative: String) -> Bool {
        guard let fd = try? open(root: root, relative: relative) else { return false }
        close(fd)
        return true
    }

    /// Opens `relative` for reading; nil when a component does not exist.
    static func open(root: URL, relative: String) throws -> Int32? {
        let components = relative.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !components.isEmpty, !components.contains(".."), !components.contains("."), !relative.hasPrefix("/")
        else { throw notRegular(relative, "it is not a path inside the store") }
        var folder = Glibc.open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else {
            if errno == ENOENT { return nil }
            throw CredentialError(
                .storeError,
                path: root.path,
                "The store folder cannot be opened (\(String(cString: strerror(errno)))).",
                hint: "Check the folder's owner and permissions."
            )
        }
        for (position, name) in components.enumerated() {
            let last = position == components.count - 1
            let flags =
                last
                ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
                : O_RDONLY | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC
            let next = openat(folder, name, flags)
            let code = errno
            close(folder)
            guard next >= 0 else {
                switch code {
                case ENOENT: return nil
                case ELOOP, ENOTDIR:
                    throw notRegular(relative, last ? "it is a link" : "\(name) on its way is a link or not a folder")
                default:
                    throw InputFile.openFailure(path: relative, kind: .storeRecord, errno: code)
                }
            }
            folder = next
        }
        var status = stat()
        guard fstat(folder, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            let what = status.st_mode & S_IFMT == S_IFDIR ? "it is a folder" : "it is a special file"
            close(folder)
            throw notRegular(relative, what)
        }
        // Opened without blocking (a FIFO would have waited for a writer); reads block again.
        let flags = fcntl(folder, F_GETFL)
        _ = fcntl(folder, F_SETFL, flags & ~O_NONBLOCK)
        return folder
    }

    static func notRegular(_ relative: String, _ why: String) -> CredentialError {
        CredentialError(
            .tampered,
            path: relative,
            "This file of the store is not a regular file apnsctl wrote (\(why)); it is refused as tampered with, and nothing was read from it.",
            hint:
                "Look at who changed it in the repository's history (git log --stat -- \(ShellWords.quote(relative))), then restore it (git checkout -- \(ShellWords.quote(relative))) or remove it."
        )
    }
}

/// Shell quoting for the commands messages print, so that they work when pasted.
public enum ShellWords {
    public static func quote(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,%")
        if !word.isEmpty, word.allSatisfy({ safe.contains($0) }) { return word }
        // A control character or a bidirectional mark would be shown as `<U+202E>` (or move the
        // text about) on a terminal, and a command copied from the screen would then name
        // another file: such a word is written in ANSI-C quoting (`$'…\u202e…'`), which bash,
        // zsh and ksh read back as the same bytes and a terminal shows as plain text.
        if word.unicodeScalars.contains(where: Untrusted.isUnsafe) { return ansiC(word) }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func ansiC(_ word: String) -> String {
        var text = "$'"
        for scalar in word.unicodeScalars {
            switch scalar {
            case "\\": text += "\\\\"
            case "'": text += "\\'"
            case _ where scalar.value < 0x80 && Untrusted.isUnsafe(scalar):
                text += "\\x" + String(scalar.value, radix: 16).leftPad(2)
            case _ where Untrusted.isUnsafe(scalar):
                text += "\\u" + String(scalar.value, radix: 16).leftPad(4)
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        return text + "'"
    }

    public static func join(_ words: [String]) -> String { words.map(quote).joined(separator: " ") }
}

extension String {
    fileprivate func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
