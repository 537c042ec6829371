import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program (age, git) with its input and a secret given through pipes only.
///
/// Foundation's `Process` cannot hand a child a descriptor other than 0, 1 and 2, and age reads
/// its identity from a file name: the identity goes through a pipe that the child inherits as
/// descriptor 3 and opens as `/dev/fd/3`, so no secret is ever written to a file or put in argv.
struct Subprocess {
    struct Result {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
        var succeeded: Bool { status == 0 }
        var output: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The descriptor number a child finds the secret on (`/dev/fd/3`).
    static let secretDescriptor: Int32 = 3

    var executable: String
    var arguments: [String]
    var environment: [String: String] = ProcessInfo.processInfo.environment

    /// Finds `name` on PATH, or nil.
    static func locate(_ name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs the program to its end. `input` goes to its stdin; `secret`, when given, is readable
    /// on descriptor 3. Both are written from other threads, so a child that writes before it
    /// has read everything never blocks on a full pipe.
    func run(input: SecretBytes? = nil, secret: SecretBytes? = nil) throws -> Result {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        var secretPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0, pipe(&secretPipe) == 0 else {
            throw Self.failure(executable, "cannot create pipes (\(String(cString: strerror(errno))))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        posix_spawn_file_actions_adddup2(&actions, secretPipe[0], Self.secretDescriptor)
        // Every other descriptor this process holds is close-on-exec or closed here.
        for fd in stdinPipe + stdoutPipe + stderrPipe + secretPipe where fd > Self.secretDescriptor {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        // The child starts with no blocked signals and SIGPIPE's default action, whatever this
        // process set for itself.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        for fd in [stdinPipe[0], stdoutPipe[1], stderrPipe[1], secretPipe[0]] { close(fd) }
        guard spawned == 0 else {
            for fd in [stdinPipe[1], stdoutPipe[0], stderrPipe[0], secretPipe[1]] { close(fd) }
            throw Self.failure(executable, "cannot start it (\(String(cString: strerror(spawned))))")
        }
        let group = DispatchGroup()
        let feeds: [(Int32, SecretBytes?)] = [(stdinPipe[1], input), (secretPipe[1], secret)]
        for (fd, bytes) in feeds {
            let fd = fd
            group.enter()
            DispatchQueue.global().async {
                // A child that exits without reading gives EPIPE, not SIGPIPE: the caller ignores it.
                bytes?.withUnsafeBytes { buffer in Self.writeAll(fd, buffer) }
                close(fd)
                group.leave()
            }
        }
        nonisolated(unsafe) var errorBytes: [UInt8] = []
        let stderrRead = stderrPipe[0]
        group.enter()
        DispatchQueue.global().async {
            errorBytes = Self.readAll(stderrRead)
            group.leave()
        }
        let outputBytes = Self.readAll(stdoutPipe[0])
        group.wait()
        close(stdoutPipe[0])
        close(stderrPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(status: exitCode, stdout: outputBytes, stderr: String(decoding: errorBytes, as: UTF8.self))
    }

    private static func writeAll(_ fd: Int32, _ buffer: UnsafeBufferPointer<UInt8>) {
        signal(SIGPIPE, SIG_IGN)
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        chunk.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices { buffer[index] = 0 }
        }
        return bytes
    }

    static func failure(_ executable: String, _ reason: String) -> CredentialError {
        CredentialError(
            .teamError,
            path: nil,
            "\((executable as NSString).lastPathComponent): \(reason).",
            hint: nil
        )
    }
}
