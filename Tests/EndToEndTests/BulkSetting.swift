import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What an end-to-end bulk run is set up with: the suite's identities, a gateway (the optimised
/// binary, recording its statistics), `count` seeded tokens in a folder of their own, and the
/// results file the run writes.
struct BulkSetting {
    let pki: TestPKI.Identities
    let gateway: GatewayProcess
    let statsFile: String
    let folder: TemporaryFolder
    let tokens: [String]
    let lines: [String]
    let tokenFile: String
    let resultsFile: String

    init(
        gateway extra: [String] = [],
        tokens count: Int,
        seed: UInt64,
        extraLines: [Int: String] = [:],
        results: String = "results.jsonl"
    ) throws {
        (pki, gateway, statsFile) = try BulkSendTests().gateway(extra)
        folder = try TemporaryFolder()
        (tokens, lines, tokenFile) = try BulkSendTests.makeTokens(count, seed: seed, in: folder, extra: extraLines)
        resultsFile = folder.path(results)
    }

    /// `send` of the alert "bulk" with the sandbox identity to the token file, its password in MINT.
    var arguments: [String] { BulkOneRunTests.arguments(pki, gateway, tokens: tokenFile) }

    /// The optimised binary with `arguments` and `extra`.
    func run(_ extra: [String], timeout: TimeInterval = 300) throws -> CLI.Result {
        try BulkSendTests.run(arguments + extra, timeout: timeout)
    }

    /// Starts the run writing to the results file (with `extra` options), and kills it
    /// (SIGKILL) once `count` results are written; returns the ended process.
    @discardableResult
    func killMidRun(after count: Int, extra: [String] = []) throws -> Process {
        let process = try BulkSendTests.startSend(
            arguments + extra + ["--results", resultsFile],
            stderr: FileHandle.nullDevice
        )
        BulkSendTests.waitForResults(resultsFile, atLeast: count)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process
    }

    /// Stops the gateway (it writes its statistics as it stops) and reads what it counted.
    func stopAndReadStatistics() throws -> [String: Any] {
        gateway.stop()
        return try BulkSendTests.stats(statsFile)
    }
}
