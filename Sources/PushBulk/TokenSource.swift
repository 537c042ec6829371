import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a bulk run's tokens come from, as a resume command must give them again: a file, or
/// standard input fed by a file (`< tokens.txt`) or by a program (`cat tokens.txt |`).
public enum TokenSource: Sendable, Equatable {
    case file(String)
    /// Standard input redirected from this file.
    case redirected(String)
    /// Standard input from a pipe; the writing program's arguments when they could be learnt.
    case pipe(producer: [String]?)

    /// What feeds standard input now. A pipe's writer is found among the processes that hold
    /// the same pipe open for writing (Linux's /proc); a shell in a pipeline that has not yet
    /// run its program is waited for briefly, and a writer that is a shell (a compound
    /// pipeline) or that runs in another folder counts as unknown.
    public static func standardInput() async -> TokenSource {
        #if os(Linux)
        guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/0") else {
            return .pipe(producer: nil)
        }
        if link.hasPrefix("/") {
            var info = stat()
            if stat(link, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { return .redirected(link) }
        }
        guard link.hasPrefix("pipe:") else { return .pipe(producer: nil) }
        for attempt in 0..<10 {
            guard let (arguments, folder) = pipeWriter(link) else { return .pipe(producer: nil) }
            let program = (arguments.first as NSString?)?.lastPathComponent ?? ""
            if ["bash", "sh", "dash", "zsh", "ksh", "fish", "busybox"].contains(program) {
                if attempt < 9 { try? await Task.sleep(for: .milliseconds(50)) }
                continue
            }
            guard folder == FileManager.default.currentDirectoryPath else { return .pipe(producer: nil) }
            return .pipe(producer: arguments)
        }
        return .pipe(producer: nil)
        #else
        return .pipe(producer: nil)
        #endif
    }

    /// The arguments and folder of the one other process that holds `pipe` open for writing.
    static func pipeWriter(_ pipe: String) -> ([String], String)? {
        let own = getpid()
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var found: [([String], String)] = []
        for entry in entries {
            guard let pid = Int32(entry), pid != own,
                let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
            else { continue }
            let writes = descriptors.contains { fd in
                guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) == pipe,
                    let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                    let flagsLine = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                    let flags = Int(flagsLine.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8)
                else { return false }
                return flags & Int(O_ACCMODE) != Int(O_RDONLY)
            }
            guard writes,
                let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                let folder = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd")
            else { continue }
            let arguments = raw.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            found.append((arguments.last == "" ? Array(arguments.dropLast()) : arguments, folder))
        }
        return found.count == 1 ? found[0] : nil
    }
}
