import CredentialFormats
import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// glibc's (2.34 and later), which Swift's Glibc module does not import.
@_silgen_name("pipe2")
private func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func systemAddCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32

/// Runs a program (age, git) with its input and a secret given through pipes only.
///
/// Foundation's `Process` cannot hand a child a descriptor other than 0, 1 and 2, and age reads
/// its identity from a file name: the identity goes through a pipe that the child inherits as
/// descriptor 3 and opens as `/dev/fd/3`, so no secret is ever written to a file or put in argv.
///
/// Every pipe is made close-on-exec (`pipe2(O_CLOEXEC)`), and the child closes every descriptor
/// above 3 before it runs (`posix_spawn_file_actions_addclosefrom_np`): two children started at
/// once from two threads never hold each other's pipes, so each sees the end of its input.
/// The child's environment is not this process's: only the variables the program needs pass
/// (``childEnvironment(_:for:)``), never `APNSCTL_IDENTITY` or a password variable.
struct Subprocess {
    struct Result {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
        /// The signal that ended the child, when one did (it never exited).
        var signal: Int32? = nil
        var succeeded: Bool { status == 0 }
        var output: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Which program a child is, for the variables it is given.
    enum Program {
        /// git and what it runs (ssh, credential helpers): home, ssh agent, proxies, git's own settings.
        case git
        /// age and age-keygen: nothing but a locale and a PATH.
        case age
    }

    /// The descriptor number a child finds the secret on (`/dev/fd/3`).
    static let secretDescriptor: Int32 = 3

    var executable: String
    var arguments: [String]
    var environment: [String: String] = ProcessInfo.processInfo.environment
    var program: Program = .age

    /// Finds `name` on PATH, or nil.
    static func locate(_ name: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// The variables a child of `program` gets: an allow-list, so that no secret this process
    /// holds in its environment (an identity, a password variable named on the command line)
    /// reaches git, ssh, a credential helper or age.
    static func childEnvironment(_ environment: [String: String], for program: Program) -> [String: String] {
        let common: Set<String> = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TMPDIR", "TZ"]
        let gitOnly: Set<String> = [
            "SSH_AUTH_SOCK", "SSH_AGENT_PID", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "http_proxy", "https_proxy",
            "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE",
            "SSL_CERT_DIR", "CURL_CA_BUNDLE", "GNUPGHOME",
        ]
        return environment.filter { key, _ in
            if key == TeamIdentity.environmentVariable { return false }
            if common.contains(key) || key.hasPrefix("LC_") { return true }
            guard program == .git else { return false }
            return gitOnly.contains(key) || key.hasPrefix("GIT_") || key.hasPrefix("SSH_")
        }
    }

    /// Runs the program to its end, on ``BlockingPool``. `input` goes to its stdin; `secret`,
    /// when given, is readable on descriptor 3. One thread feeds both and drains its output and
    /// errors as each pipe is ready (`poll`), so a child that writes before it has read
    /// everything never blocks on a full pipe.
    func run(input: SecretBytes? = nil, secret: SecretBytes? = nil) async throws -> Result {
        let subprocess = self
        return try await BlockingPool.run { try subprocess.runWaiting(input: input, secret: secret) }
    }

    /// ``run(input:secret:)`` on this thread: for work on ``BlockingPool`` already.
    func runWaiting(input: SecretBytes? = nil, secret: SecretBytes? = nil) throws -> Result {
        BlockingWork.check("Running \(executable)")
        var pipes: [[Int32]] = []
        for _ in 0..<4 {
            var ends: [Int32] = [-1, -1]
            guard systemPipe2(&ends, O_CLOEXEC) == 0 else {
                let code = errno
                for fd in pipes.joined() { close(fd) }
                throw Self.failure(executable, "cannot create pipes (\(String(cString: strerror(code))))")
            }
            pipes.append(ends)
        }
        let (stdinPipe, stdoutPipe, stderrPipe, secretPipe) = (pipes[0], pipes[1], pipes[2], pipes[3])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy; every other descriptor is closed in the child.
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        posix_spawn_file_actions_adddup2(&actions, secretPipe[0], Self.secretDescriptor)
        _ = systemAddCloseFrom(&actions, Self.secretDescriptor + 1)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = Self.childEnvironment(environment, for: program).map { strdup("\($0.key)=\($0.value)") } + [nil]
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
        if spawned == 0 { ChildProcesses.shared.insert(pid) }
        defer { ChildProcesses.shared.remove(pid) }
        for fd in [stdinPipe[0], stdoutPipe[1], stderrPipe[1], secretPipe[0]] { close(fd) }
        guard spawned == 0 else {
            for fd in [stdinPipe[1], stdoutPipe[0], stderrPipe[0], secretPipe[1]] { close(fd) }
            throw Self.failure(executable, "cannot start it (\(String(cString: strerror(spawned))))")
        }
        let (outputBytes, errorBytes) = Self.pump(
            feeding: [(stdinPipe[1], input?.bytes ?? []), (secretPipe[1], secret?.bytes ?? [])],
            draining: stdoutPipe[0],
            stderrPipe[0]
        )
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitCode = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(
            status: exitCode,
            stdout: outputBytes,
            stderr: String(decoding: errorBytes, as: UTF8.self),
            signal: (status & 0x7f) == 0 ? nil : status & 0x7f
        )
    }

    /// Writes each feed to its pipe and reads both outputs to their ends, as each descriptor is
    /// ready, on the calling thread; closes every descriptor it is given. A child that exits
    /// without reading gives EPIPE (SIGPIPE is ignored here), and the rest of its feed is dropped.
    private static func pump(
        feeding feeds: [(Int32, [UInt8])],
        draining output: Int32,
        _ errors: Int32
    ) -> (output: [UInt8], errors: [UInt8]) {
        signal(SIGPIPE, SIG_IGN)
        // Never wait in a read or a write: only in poll, for whichever pipe is ready first.
        for fd in feeds.map(\.0) + [output, errors] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        var writers = feeds.map { (fd: $0.0, bytes: $0.1, offset: 0) }
        var readers: [(fd: Int32, bytes: [UInt8])] = [(output, []), (errors, [])]
        for index in writers.indices where writers[index].bytes.isEmpty {
            close(writers[index].fd)
            writers[index].fd = -1
        }
        var chunk = [UInt8](repeating: 0, count: 16384)
        defer {
            chunk.withUnsafeMutableBufferPointer { buffer in
                for index in buffer.indices { buffer[index] = 0 }
            }
        }
        while writers.contains(where: { $0.fd >= 0 }) || readers.contains(where: { $0.fd >= 0 }) {
            let open =
                writers.indices.filter { writers[$0].fd >= 0 }.map { (writer: true, index: $0) }
                + readers.indices.filter { readers[$0].fd >= 0 }.map { (writer: false, index: $0) }
            var polled = open.map { entry in
                entry.writer
                    ? pollfd(fd: writers[entry.index].fd, events: Int16(POLLOUT), revents: 0)
                    : pollfd(fd: readers[entry.index].fd, events: Int16(POLLIN), revents: 0)
            }
            if poll(&polled, nfds_t(polled.count), -1) < 0 {
                if errno == EINTR { continue }
                for entry in open {
                    close(entry.writer ? writers[entry.index].fd : readers[entry.index].fd)
                }
                break
            }
            for (entry, result) in zip(open, polled) where result.revents != 0 {
                if entry.writer {
                    let writer = writers[entry.index]
                    let written = writer.bytes.withUnsafeBufferPointer { buffer in
                        write(writer.fd, buffer.baseAddress! + writer.offset, buffer.count - writer.offset)
                    }
                    if written < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    if written > 0 { writers[entry.index].offset += written }
                    if written <= 0 || writers[entry.index].offset == writer.bytes.count {
                        close(writer.fd)
                        writers[entry.index].fd = -1
                    }
                } else {
                    let fd = readers[entry.index].fd
                    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    if count > 0 {
                        readers[entry.index].bytes.append(contentsOf: chunk[0..<count])
                    } else {
                        close(fd)
                        readers[entry.index].fd = -1
                    }
                }
            }
        }
        return (readers[0].bytes, readers[1].bytes)
    }

    static func failure(_ executable: String, _ reason: String) -> CredentialError {
        CredentialError(.teamError, path: nil, "\((executable as NSString).lastPathComponent): \(reason).", hint: nil)
    }
}

/// The programs (git, age) this process runs.
public enum ChildPrograms {
    /// Stops every child still running (SIGKILL): a service that is told to stop does not wait
    /// for a git or age that does not end. Their runs then fail, and are reaped as usual.
    public static func stopAll() { ChildProcesses.shared.killAll() }
}

/// The children this process is waiting for, so that a stopping service can end them.
final class ChildProcesses: @unchecked Sendable {
    static let shared = ChildProcesses()
    private let lock = NSLock()
    private var running: Set<pid_t> = []

    func insert(_ pid: pid_t) {
        lock.lock()
        running.insert(pid)
        lock.unlock()
    }

    func remove(_ pid: pid_t) {
        lock.lock()
        running.remove(pid)
        lock.unlock()
    }

    func killAll() {
        lock.lock()
        let pids = running
        lock.unlock()
        for pid in pids { kill(pid, SIGKILL) }
    }
}
