import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `apnsctl gateway serve` as a child process, ready when it has written its port, stopped when
/// the value goes away: the local gateway as a process, as `RunningGateway` is the same gateway
/// in process.
public final class GatewayProcess: @unchecked Sendable {
    public let process = Process()
    public let port: Int
    public let caFile: String
    public let logFile: String

    public init(_ folder: TemporaryFolder, name: String, arguments: [String], binary: String = CLI.binary) throws {
        let portFile = folder.path("\(name).port")
        caFile = folder.path("\(name)-ca.pem")
        logFile = folder.path("\(name).jsonl")
        let process = self.process
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            ["gateway", "serve", "--port-file", portFile, "--ca-out", caFile, "--log", logFile] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Ready is an event: the port file is written once the gateway listens (or the program
        // ended, which is a failure to start).
        let port = waitForValue { () -> Int? in
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let value = Int(text) {
                return value
            }
            return process.isRunning ? nil : 0
        }
        guard let port, port > 0 else {
            process.stop(signal: SIGKILL, "the local gateway that did not start")
            throw CLIError(message: "the local gateway did not start (\(arguments))")
        }
        self.port = port
    }

    public var address: String { "127.0.0.1:\(port)" }
    public var connection: [String] { ["--gateway", address, "--ca", caFile] }

    /// What the gateway recorded as delivered.
    public func deliveries() throws -> [[String: Any]] {
        // The gateway creates its log at start; a missing file is a failure, not "nothing delivered".
        let text = try String(contentsOfFile: logFile, encoding: .utf8)
        return try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }

    deinit { stop() }

    /// Stops the gateway with SIGTERM and waits for it (it writes its statistics as it stops).
    public func stop() {
        guard process.isRunning else { return }
        process.stop(signal: SIGTERM, "the local gateway")
    }
}
