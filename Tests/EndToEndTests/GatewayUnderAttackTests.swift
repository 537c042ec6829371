import Foundation
import TestSupport
import Testing

/// The gateway under hostile clients: each attack is answered by closing the connection, the
/// process's memory stays bounded with twenty attackers at once, and a well-behaved client
/// keeps getting answers meanwhile. Also what the gateway promises about its record and
/// about provider tokens from the future.
@Suite(.serialized)
struct GatewayUnderAttackTests {
    static let token = GatewayCommandTests.token
    static let keyArguments = [
        "--token-key", "ABC123DEFG=\(CLI.cert("keys/AuthKey_ABC123DEFG.pub.pem"))", "--team-id", "ABCDE12345",
    ]
    /// The bound docs/gateway.md states for the whole process, twenty attackers at once.
    static let memoryBound = 200 * 1024 * 1024
    static let attackers = 20
    static let attackSeconds = 5.0
    /// From the attack's start: the attack lasts at most `attackSeconds`, and then the clients
    /// wait for the close with a margin a loaded machine cannot use up (HostileClients' grace).
    static let closedWithin = attackSeconds + 30

    static func background(_ program: String, _ arguments: [String], stdout: FileHandle) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// A notification sent with the token key, as a user would: 0 when it was answered 200.
    static func wellBehavedSend(_ gateway: GatewayProcess) throws -> CLI.Result {
        try CLI.run(
            [
                "send", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
                "com.example.app", "--token", token, "--alert", "still served",
            ] + gateway.connection,
            timeout: 120
        )
    }

    enum Attack: String, CaseIterable, Sendable {
        case continuation
        case rapidReset = "rapid-reset"
        case dataAfterReset = "data-after-reset"
        case pingAfterReset = "ping-after-reset"
        case pingFlood = "ping-flood"
        case settingsFlood = "settings-flood"
        case hpackBomb = "hpack-bomb"
        case unreadPings = "unread-pings"
    }

    @Test(arguments: Attack.allCases)
    func anAttackIsClosedAndTheGatewayStaysWithinItsMemoryBound(_ attack: Attack) throws {
        let folder = try TemporaryFolder()
        // Token authentication on: the attackers need no client certificate, as on APNs.
        let gateway = try GatewayProcess(folder, name: "attacked", arguments: Self.keyArguments)
        let script = folder.path("hostile.py")
        try HostileClients.script.write(toFile: script, atomically: true, encoding: .utf8)
        let outputPath = folder.path("attack.jsonl")
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        let connectedFile = folder.path("connected.txt")
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let attackers = try Self.background(
            python,
            [
                script, String(gateway.port), gateway.caFile, attack.rawValue, String(Self.attackers),
                String(Self.attackSeconds), connectedFile,
            ],
            stdout: output
        )
        // Meanwhile (once every attacker is connected, or their program has ended) a
        // well-behaved client is answered.
        waitUntil {
            let connected = (try? String(contentsOfFile: connectedFile, encoding: .utf8)) ?? ""
            return connected.split(separator: "\n").count == Self.attackers || !attackers.isRunning
        }
        for _ in 0..<2 {
            let sent = try Self.wellBehavedSend(gateway)
            #expect(sent.status == 0, "a well-behaved client during \(attack.rawValue): \(sent.stdout) \(sent.stderr)")
        }
        attackers.stop(signal: nil, within: Self.closedWithin + 60)
        try output.close()

        let lines = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n")
        let results = try lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(results.count == Self.attackers, "one report per attacker: \(lines.prefix(3))")
        for result in results {
            #expect(result["connected"] as? Bool == true, "\(result)")
            #expect(result["closed"] as? Bool == true, "the gateway closes a connection it gave up on: \(result)")
            if let after = result["closed_after"] as? Double {
                #expect(after <= Self.closedWithin, "closed \(after) s after the attack began: \(result)")
            }
        }
        // VmHWM: the most memory the process has held, the peak of its resident set.
        let peak = try GatewayConnectionBoundsTests.residentBytes(gateway.process.processIdentifier, field: "VmHWM")
        #expect(peak < Self.memoryBound, "the gateway's peak RSS was \(peak / 1_048_576) MB during \(attack.rawValue)")
        let after = try Self.wellBehavedSend(gateway)
        #expect(after.status == 0, "after \(attack.rawValue): \(after.stdout) \(after.stderr)")
    }

    /// SIGTERM while answers are still owed (added latency): every notification answered 200
    /// is in the log, because the log is closed only after the last answer has gone out.
    @Test func sigtermUnderLoadLosesNoAcceptedNotificationFromTheLog() throws {
        let folder = try TemporaryFolder()
        let gateway = try GatewayProcess(
            folder,
            name: "terminated",
            arguments: Self.keyArguments + ["--latency-ms", "20"],
            binary: CLI.throughputBinary
        )
        let tokens = (0..<20_000).map { String(format: "%064x", $0 + 1) }
        let tokenFile = folder.path("tokens.txt")
        try (tokens.joined(separator: "\n") + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let resultsFile = folder.path("results.jsonl")
        let send = try Self.background(
            CLI.throughputBinary,
            [
                "send", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
                "com.example.app", "--alert", "load", "--tokens", tokenFile, "--results", resultsFile,
            ] + gateway.connection,
            stdout: FileHandle.nullDevice
        )
        // Under load: some thousand answered, many more in flight.
        BulkSendTests.waitForResults(resultsFile, atLeast: 1_000)
        gateway.process.stop(signal: SIGTERM)
        send.stop(signal: nil, within: 120)

        let answered = try String(contentsOfFile: resultsFile, encoding: .utf8).split(separator: "\n").compactMap {
            line -> String? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["status"] as? Int == 200
            else { return nil }
            return (object["apns_id"] as? String)?.lowercased()
        }
        #expect(answered.count >= 1_000, "the run was stopped under load: \(answered.count) answered 200")
        let logged = Set(try gateway.deliveries().compactMap { ($0["apns_id"] as? String)?.lowercased() })
        let missing = answered.filter { !logged.contains($0) }
        #expect(missing.count == 0, "notifications answered 200 missing from the log, e.g. \(missing.prefix(3))")
    }
}
