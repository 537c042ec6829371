import Foundation
import Testing

/// Runs the built `apnsctl` binary as a user would.
public enum CLI {
    public static let packageRoot = TestPaths.packageRoot
    public static let certs = TestPaths.certs
    public static let appleIssued = TestPaths.appleIssued

    public static func cert(_ relative: String) -> String { TestPaths.cert(relative) }

    /// The optimised build, for tests that send tens of thousands of notifications (SwiftNIO's
    /// debug build is some twenty times slower): APNSCTL_RELEASE_BIN when set (scripts/test
    /// sets it), else the binary under test.
    public static let throughputBinary: String = ProcessInfo.processInfo.environment["APNSCTL_RELEASE_BIN"] ?? binary

    /// The binary built next to this test bundle (swift test builds both into one folder),
    /// or APNSCTL_BIN when set.
    public static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["APNSCTL_BIN"] { return path }
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        // The test runner may live inside an .xctest bundle folder.
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("apnsctl").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/apnsctl").path
    }()

    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var arguments: [String]

        public init(status: Int32, stdout: String, stderr: String, arguments: [String]) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
            self.arguments = arguments
        }
    }

    /// Runs apnsctl with `arguments`, feeding `stdin`, with extra environment variables.
    /// `removeEnvironment` drops variables (e.g. the D-Bus address) from the child's environment.
    @discardableResult
    public static func run(
        _ arguments: [String],
        stdin: String? = nil,
        environment: [String: String] = [:],
        removeEnvironment: [String] = [],
        timeout: TimeInterval = 60
    ) throws -> Result {
        try runProgram(
            binary,
            arguments,
            stdin: stdin,
            environment: environment,
            removeEnvironment: removeEnvironment,
            timeout: timeout
        )
    }

    /// Passwords the tests use; none may ever travel in a process's arguments.
    public static let knownSecrets = [
        "apnsctl-test", "mint-pass", "new-secret-pass", "round-trip-pass", "Leak-Canary-",
    ]

    public static func runProgram(
        _ program: String,
        _ arguments: [String],
        stdin: String? = nil,
        environment: [String: String] = [:],
        removeEnvironment: [String] = [],
        timeout: TimeInterval = 60
    ) throws -> Result {
        for argument in arguments where !argument.hasPrefix("/") {
            #expect(
                !knownSecrets.contains { argument.contains($0) },
                "a secret in the arguments of \(program): \(argument)"
            )
        }
        let process = Process()
        if program.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [program] + arguments
        }
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for key in removeEnvironment { env.removeValue(forKey: key) }
        for (key, value) in environment { env[key] = value }
        process.environment = env

        let output = Pipe()
        let errors = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()

        // Read both pipes concurrently so a chatty child never blocks on a full pipe.
        let outReader = PipeReader(output.fileHandleForReading)
        let errReader = PipeReader(errors.fileHandleForReading)
        let deadline = DispatchTime.now() + timeout
        if !outReader.wait(until: deadline) || !errReader.wait(until: deadline) {
            process.terminate()
            // A grandchild that inherited the pipes may keep them open: do not wait forever.
            _ = outReader.wait(until: .now() + 5)
            _ = errReader.wait(until: .now() + 5)
            Issue.record("\(program) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        process.waitUntilExit()
        let result = Result(
            status: process.terminationStatus,
            stdout: String(decoding: outReader.data, as: UTF8.self),
            stderr: String(decoding: errReader.data, as: UTF8.self),
            arguments: arguments
        )
        // Every message apnsctl prints in the whole suite is scanned for what must never reach
        // a user: type names, source paths, raw library errors and byte dumps.
        if program == binary || program == throughputBinary {
            let leaks = internals(in: result.stderr)
            #expect(leaks.isEmpty, "internal details in the messages of apnsctl \(arguments): \(leaks)")
        }
        return result
    }

    /// The parts of `text` that are a program's internals rather than words for its user.
    public static func internals(in text: String) -> [String] {
        let patterns: [Regex<Substring>] = [
            // A Swift source position (SwiftASN1/ASN1.swift:139).
            /[A-Za-z0-9_+]+\.swift:\d+/,
            // Library and standard types and their cases.
            /\b(?:DecodingError|EncodingError|NIOSSLError|NIOHTTP2Errors|ChannelError|IOError|ASN1Error|CertificateError|BoringSSLError|NIOConnectionError|CodingKeys|keyNotFound|typeMismatch|valueNotFound|dataCorrupted)\b/,
            /\b(?:Swift|Foundation|NIOCore|NIOPosix|NIOSSL|NIOHTTP2|SwiftASN1|X509|PushCore|CredentialFormats|PushStore|PushTeam|PushChecks|PushGateway|LocalGateway)\.[A-Z][A-Za-z]+/,
            /Optional\(/,
            /\berror \d+\b/,
            // A byte dump: a long list of small numbers, or a long run of hex.
            /\[(?:\d{1,3}, ){15,}\d{1,3}\]/,
            /[0-9A-Fa-f]{300,}/,
        ]
        return patterns.flatMap { pattern in text.matches(of: pattern).map { String(text[$0.range]) } }
    }
}

/// Reads a pipe to its end on a thread of its own. A reader queued on Dispatch's shared pool
/// can wait there behind other tests' blocked work while its child, its pipe full, waits for it.
final class PipeReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var read = Data()

    init(_ handle: FileHandle) {
        Thread { [self] in
            let all = handle.readDataToEndOfFile()
            lock.withLock { read = all }
            done.signal()
        }.start()
    }

    /// What was read; empty until the pipe's end was reached.
    var data: Data { lock.withLock { read } }

    /// Waits for the pipe's end until `deadline`; false when it had not come.
    func wait(until deadline: DispatchTime) -> Bool {
        guard done.wait(timeout: deadline) == .success else { return false }
        done.signal()
        return true
    }
}

/// A temporary folder removed when the test ends.
public final class TemporaryFolder: @unchecked Sendable {
    public let url: URL
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

extension CLI {
    /// Runs every command at once, each waited for on a thread of its own (Dispatch's shared
    /// pool is as wide as the machine has cores and may be busy with other tests' work), and
    /// gives their results in the order given; nil for one that could not start.
    public static func runTogether(
        _ commands: [[String]],
        stdin: String? = nil,
        timeout: TimeInterval = 120
    ) -> [Result?] {
        let results = TogetherResults(count: commands.count)
        let group = DispatchGroup()
        for (index, command) in commands.enumerated() {
            group.enter()
            Thread {
                results.set(index, try? run(command, stdin: stdin, timeout: timeout))
                group.leave()
            }.start()
        }
        group.wait()
        return results.values
    }
}

final class TogetherResults: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [CLI.Result?]
    init(count: Int) { stored = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: CLI.Result?) { lock.withLock { stored[index] = value } }
    var values: [CLI.Result?] { lock.withLock { stored } }
}
