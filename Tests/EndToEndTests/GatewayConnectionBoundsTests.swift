import Foundation
import TestSupport
import Testing

/// The gateway bounds the connections it holds: a cap at which the connection idle the longest
/// makes room for a new one, and memory given back once connections close. A gateway that takes
/// token keys needs no client certificate, so anyone on the host can open connections to it.
@Suite(.serialized)
struct GatewayConnectionBoundsTests {
    static let keyArguments = GatewayUnderAttackTests.keyArguments

    /// A process's memory as its /proc status gives it under `field` (VmRSS by default), in bytes.
    static func residentBytes(_ pid: Int32, field: String = "VmRSS") throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }

    /// File descriptors a process holds.
    static func descriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// A real send among idle connections at the cap is answered: the event is the answer; the
    /// bound on its time only tells a send that waited behind the idle ones (the gateway's own
    /// deadlines are longer) and has a margin a loaded machine cannot use up.
    static let answeredWithin: TimeInterval = 30

    @Test func aRealSendIsAnsweredWhileSixThousandIdleConnectionsKnock() throws {
        let folder = try TemporaryFolder()
        let stats = folder.path("stats.json")
        // The default cap (1,000 connections) with token keys: no certificate is needed to connect.
        let running = try GatewayProcess(
            folder,
            name: "crowded",
            arguments: Self.keyArguments + ["--stats", stats],
            binary: CLI.throughputBinary
        )
        let pid = running.process.processIdentifier
        let clients = try IdleClients(folder, port: running.port, caFile: running.caFile)
        let opened = try clients.command("open 6000 100")
        #expect(opened["failed"] as? Int == 0, "every idle connection got as far as HTTP/2: \(opened)")
        let held = Self.descriptors(pid)
        #expect(held < 1_000 + 100, "the gateway holds its cap of connections, not 6,000: \(held) descriptors")

        let started = Date()
        let sent = try GatewayUnderAttackTests.wellBehavedSend(running)
        let seconds = Date().timeIntervalSince(started)
        #expect(sent.status == 0, "a well-behaved client among idle ones: \(sent.stdout) \(sent.stderr)")
        #expect(seconds < Self.answeredWithin, "answered in \(seconds) s")
        // The clients see the gateway's closes as they come: wait for the event, not a time.
        var status: [String: Any] = [:]
        try waitUntil {
            status = try clients.command("status")
            return (status["open"] as? Int ?? .max) <= 1_000
        }
        #expect((status["open"] as? Int ?? .max) <= 1_000, "\(status)")

        running.stop()  // it writes its statistics as it stops
        let counted = try BulkSendTests.stats(stats)
        #expect(counted["connections_shed"] as? Int ?? 0 >= 5_000, "shedding is counted: \(counted)")
        #expect(counted["max_open_connections"] as? Int ?? .max <= 1_001, "\(counted)")
        #expect(counted["accepted"] as? Int == 1)
    }

    @Test func fourRoundsOfFiveThousandConnectionsGiveTheirMemoryBack() async throws {
        let folder = try TemporaryFolder()
        // Room for all of them, and no deadline closes any while a slow machine opens the rest.
        let gateway = try GatewayProcess(
            folder,
            name: "rounds",
            arguments: Self.keyArguments + [
                "--max-connections", "6000", "--first-request-timeout", "0", "--idle-timeout", "0",
            ],
            binary: CLI.throughputBinary
        )
        let pid = gateway.process.processIdentifier
        let clients = try IdleClients(folder, port: gateway.port, caFile: gateway.caFile)
        let baseline = Self.descriptors(pid)
        var afterFirst: Int?
        for round in 1...4 {
            let before = try Self.residentBytes(pid)
            let opened = try clients.command("open 5000 100")
            #expect(opened["opened"] as? Int == 5_000, "round \(round): \(opened)")
            #expect(Self.descriptors(pid) >= baseline + 4_900, "round \(round): the gateway holds them all")
            let open = try Self.residentBytes(pid)
            _ = try clients.command("close")
            let closed = try await eventually(timeout: 120) { Self.descriptors(pid) <= baseline + 5 }
            #expect(closed, "round \(round): the gateway closed its side (\(Self.descriptors(pid)) descriptors)")
            // At least half of what the round took comes back (without the trim, a seventh did).
            let given = try await eventually(timeout: 30) {
                (try? Self.residentBytes(pid)).map { $0 - before < (open - before) / 2 } ?? false
            }
            let after = try Self.residentBytes(pid)
            #expect(given, "round \(round): \(before / 1_048_576) → \(open / 1_048_576) → \(after / 1_048_576) MB")
            guard let first = afterFirst else {
                afterFirst = after
                continue
            }
            // What stays after a round does not grow: each round gives its memory back to within
            // 50 MB of what stayed after the first, waited for as the event it is (the trims after
            // a burst of closes come one after another, later on a loaded machine).
            let back = try await eventually(timeout: 120) {
                (try? Self.residentBytes(pid)).map { $0 - first < 50 * 1_048_576 } ?? false
            }
            let stays = (try? Self.residentBytes(pid)) ?? after
            #expect(back, "round \(round): \(stays / 1_048_576) MB stay, \(first / 1_048_576) MB after the first round")
        }
    }

    @Test func atTheCapTheConnectionIdleTheLongestMakesRoom() throws {
        let folder = try TemporaryFolder()
        let stats = folder.path("stats.json")
        let running = try GatewayProcess(
            folder,
            name: "capped",
            arguments: Self.keyArguments + ["--max-connections", "3", "--stats", stats]
        )
        let clients = try IdleClients(folder, port: running.port, caFile: running.caFile)
        let opened = try clients.command("open 3 1")  // numbers 0, 1, 2, in that order
        #expect(opened["opened"] as? Int == 3, "\(opened)")
        #expect(try clients.command("status")["closed"] as? [Int] == [], "under the cap nothing is shed")

        let sent = try GatewayUnderAttackTests.wellBehavedSend(running)
        #expect(sent.status == 0, "connection 4 of 3 is served: \(sent.stdout) \(sent.stderr)")
        // The clients see the gateway's close when it comes: wait for the event, not a time.
        var closed: [Int] = []
        try waitUntil {
            closed = try clients.command("status")["closed"] as? [Int] ?? []
            return !closed.isEmpty
        }
        #expect(closed == [0], "the oldest idle one made room")
        // The send has gone: one place is free, and the next newcomer takes the oldest's.
        _ = try clients.command("open 2 1")
        var status: [String: Any] = [:]
        try waitUntil {
            status = try clients.command("status")
            return (status["closed"] as? [Int] ?? []).count >= 2
        }
        #expect(status["closed"] as? [Int] == [0, 1], "\(status)")
        #expect(status["open"] as? Int == 3, "\(status)")

        running.stop()
        let counted = try BulkSendTests.stats(stats)
        #expect(counted["connections_shed"] as? Int == 2, "\(counted)")
        #expect(counted["max_open_connections"] as? Int == 3, "\(counted)")
        #expect(counted["accepted"] as? Int == 1, "\(counted)")
    }

    @Test func maxConnectionsIsValidated() throws {
        let refused = try CLI.run(["gateway", "serve", "--max-connections", "0"], timeout: 20)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--max-connections is 1 or more"), "\(refused.stderr)")
        let help = try CLI.run(["gateway", "serve", "--help"], timeout: 20)
        for option in ["--max-connections", "--first-request-timeout", "--handshake-timeout", "--idle-timeout"] {
            #expect(help.stdout.contains(option), "\(option) in --help")
        }
        #expect(help.stdout.contains("default: 1000"), "the cap's default in --help")
    }
}
