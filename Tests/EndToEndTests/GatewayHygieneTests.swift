import Foundation
import TestSupport
import Testing

/// The local gateway keeps its records private, does not replace a CA clients trust, and does
/// not hold connections that do nothing.
struct GatewayHygieneTests {
    @Test func recordsArePrivateAndTheCAIsNeverOverwrittenWithoutForce() throws {
        let folder = try TemporaryFolder()
        let stats = folder.path("stats.json")
        var gateway: GatewayProcess? = try GatewayProcess(folder, name: "private", arguments: ["--stats", stats])
        let log = try #require(gateway?.logFile)
        let ca = try #require(gateway?.caFile)
        #expect(try posixPermissions(log) & 0o077 == 0, "the delivery log is the user's alone")
        #expect(try posixPermissions(folder.path("private.port")) & 0o077 == 0)
        gateway = nil  // stopped: it writes its statistics
        #expect(try posixPermissions(stats) & 0o077 == 0)

        let before = try String(contentsOfFile: ca, encoding: .utf8)
        let refused = try CLI.run(["gateway", "serve", "--ca-out", ca, "--port", "0"], timeout: 20)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(ca) && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: ca, encoding: .utf8) == before, "the CA clients trust is untouched")

        try FileManager.default.removeItem(atPath: folder.path("private.port"))  // so that the wait is for the new one
        let forced = try GatewayProcess(folder, name: "private", arguments: ["--force"])
        #expect(try String(contentsOfFile: forced.caFile, encoding: .utf8) != before, "--force replaces it")
    }

    @Test func anIdleConnectionGetsGoAwayIdleTimeoutAndIsClosed() throws {
        // A real TLS client that completes the handshake and then says nothing.
        let (client, _) = try GatewayDeadlineTests.meet("silent", ["--idle-timeout", "1"])
        #expect(client["closed"] as? Bool == true, "closed after the idle timeout, not held: \(client)")
        #expect(client["goaway"] as? String == "IdleTimeout", "GOAWAY carries APNs' reason: \(client)")
    }

    @Test func aConnectionThatNeverFinishesItsHandshakeIsClosed() throws {
        // A TCP client that sends nothing at all.
        let (client, _) = try GatewayDeadlineTests.meet("nothing", ["--handshake-timeout", "1"])
        #expect(client["closed"] as? Bool == true, "a client that sends nothing is not held for ever: \(client)")
    }
}

extension GatewayHygieneTests {
    /// A running apnsctl (here the gateway, which holds its server key) leaves no core dump.
    @Test func aRunningProcessHasNoCoreSize() throws {
        let folder = try TemporaryFolder()
        let gateway = try GatewayProcess(folder, name: "core", arguments: [])
        let limits = try String(contentsOfFile: "/proc/\(gateway.process.processIdentifier)/limits", encoding: .utf8)
        let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"])
    }
}
