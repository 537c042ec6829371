import Foundation
import Glibc
import LocalGateway
import TestSupport
import Testing

/// What `apnsctl exporter` refuses to let a scraper (or anyone who can connect) make it do:
/// connect for a topic that is not the credential's, connect more than once per interval, hold
/// half-sent or idle connections until its descriptors run out.
struct ExporterBoundsTests {
    static let credentials = ExporterTests.credentials

    @Test func topicsNotTheCredentialsAreRefusedWithoutConnectingAndItsOwnShareOneConnection() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [Self.credentials[0]])
        let gateway = try await RunningGateway.start(.production)
        defer { Task { try? await gateway.gateway.stop() } }
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile]
        )

        // 100 made-up topics, one curl reusing one connection: every one a 400 naming the
        // credential's topics, and not one connection to the gateway.
        let made = (0..<100).map { "com.attacker.topic\($0)" } + ["com.example.app%0D%0AX-Injected:%201"]
        let urls = made.map { exporter.url("/probe?credential=myapp&environment=production&topic=\($0)") }
        let refused = try CLI.runProgram(
            "curl",
            ["-s", "-w", "%{http_code}\n", "--max-time", "120"] + urls.flatMap { ["-o", "/dev/null", $0] },
            timeout: 180
        )
        let statuses = refused.stdout.split(separator: "\n")
        #expect(statuses.count == made.count, "\(refused.stderr)")
        #expect(statuses.allSatisfy { $0 == "400" }, "\(Set(statuses))")
        let one = try exporter.get("/probe?credential=myapp&environment=production&topic=com.attacker.topic7")
        #expect(one.status == 400)
        #expect(one.body.contains("not one of myapp's topics"), "\(one.body)")
        #expect(one.body.contains("com.example.app.voip"), "the answer names the topics it may send to: \(one.body)")
        #expect(gateway.gateway.statistics.connections == 0, "no connection for a refused topic")

        // Its own topics, with and without push types' suffixes, within one interval: one
        // connection, whatever the topic; the rest are answered from the last result.
        let own = [
            "", "com.example.app", "com.example.app.voip", "com.example.app.complication",
            "com.example.app.push-type.liveactivity",
        ]
        var cached: [Double] = []
        for topic in own {
            let answer = try exporter.get(
                "/probe?credential=myapp&environment=production" + (topic.isEmpty ? "" : "&topic=\(topic)")
            )
            #expect(answer.status == 200, "\(topic): \(answer.body)")
            cached.append(ExporterTests.value(try Monitoring.parse(answer.body), "apnsctl_probe_cached") ?? -1)
        }
        #expect(cached == [0, 1, 1, 1, 1], "\(cached)")
        #expect(gateway.gateway.statistics.connections == 1, "one connection per credential and interval")
        // A verdict logged once, not once a scrape.
        #expect(exporter.log.components(separatedBy: "probe myapp production").count == 2, "\(exporter.log)")
        #expect(exporter.stop() == 0)
    }

    /// A client that opens `halfSent` connections sending half a request and `idle` ones sending
    /// nothing, interleaved, then holds them until its standard input closes.
    static let holdingClient = """
        import resource, socket, sys
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        port, half_sent, idle = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        held, failed = [], 0
        for index in range(half_sent + idle):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                if index % 2 == 0 and index // 2 < half_sent:
                    s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nUser-Agent: slow")
                held.append(s)
            except OSError:
                failed += 1
        print("ready", len(held), failed, flush=True)
        sys.stdin.read()
        """

    @Test func halfSentAndIdleConnectionsNeitherStarveAScrapeNorOutlastTheTimeouts() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [Self.credentials[0]])
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--skip-secrets", "--request-timeout", "3", "--idle-timeout", "5"],
            descriptorLimit: 1024
        )
        let limits = try String(contentsOfFile: "/proc/\(exporter.process.processIdentifier)/limits", encoding: .utf8)
        let openFiles = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") } ?? ""
        #expect(
            openFiles.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first == "1024",
            "\(openFiles)"
        )

        let client = try HoldingClient(script: Self.holdingClient, port: exporter.port, ["3000", "3000"])
        defer { client.stop() }
        // Waits for "ready" (the client connects 6,000 times; bounded by the read below ending
        // when it exits).
        let line = client.firstLine()
        #expect(line.hasPrefix("ready"), "\(line)")
        #expect(exporter.openDescriptors < 1024, "under the cap: \(exporter.openDescriptors)")

        // While the client holds its 6,000 connections open, a real scrape is answered.
        let scrape = try exporter.get("/metrics")
        #expect(scrape.status == 200, "a scrape under 6,000 held connections")
        #expect(scrape.body.contains("apnsctl_check_success"))

        // The exporter closes what it held within the timeouts; its descriptors come back down.
        let closed = try await eventually(timeout: 60) { (0..<100).contains(exporter.openDescriptors) }
        #expect(closed, "descriptors still open: \(exporter.openDescriptors)")
        #expect(exporter.process.isRunning)
        #expect(try exporter.get("/metrics").status == 200)
        #expect(exporter.stop() == 0)
    }

    @Test func theConnectionCapIsLoweredToTheDescriptorLimitSoAScrapeStillGetsIn() async throws {
        let folder = try TemporaryFolder()
        let store = try Monitoring.store(in: folder, [Self.credentials[0]])
        // 96 open files at most (soft and hard): 64 are kept for the listener, the log and the
        // event loops, so 32 of the default 256 connections.
        let exporter = try ExporterProcess(
            folder,
            store: store,
            arguments: ["--skip-secrets", "--idle-timeout", "600"],
            descriptorLimit: 96
        )
        let log = exporter.log
        #expect(log.contains("warning: holding at most 32 connections, not 256"), "\(log)")
        #expect(log.contains("ulimit -n 320"), "the warning says how to hold them all: \(log)")

        let client = try HoldingClient(script: Self.holdingClient, port: exporter.port, ["0", "300"])
        defer { client.stop() }
        let line = client.firstLine()
        #expect(line.hasPrefix("ready"), "\(line)")

        // 300 idle connections, none closed by a timeout: the exporter holds 32 of them and
        // closes the rest as they arrive, so it never runs out of descriptors and a scrape
        // still gets in (taking the place of the oldest idle one).
        #expect(exporter.openDescriptors < 96, "under the limit: \(exporter.openDescriptors)")
        let scrape = try exporter.get("/metrics")
        #expect(scrape.status == 200, "a scrape under 300 idle connections: \(exporter.log)")
        #expect(scrape.body.contains("apnsctl_check_success"))
        #expect(exporter.process.isRunning)
        #expect(exporter.stop() == 0)
    }
}

/// The Python client that holds connections to the exporter open (its arguments after the
/// port: how many it holds, and how many it opens); it says "ready" once they are, and lets
/// them go when its standard input closes.
final class HoldingClient {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(script source: String, port: Int, _ arguments: [String]) throws {
        let script = try Fixtures.temporaryFile("hold.py", contents: source)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, String(port)] + arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Its first line ("ready"), or what it printed before it ended.
    func firstLine() -> String { String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self) }

    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

extension FileHandle {
    /// Bytes up to the first newline, or to the end of the stream.
    func availableLine() -> Data {
        var line = Data()
        while true {
            let byte = readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { return line }
            line.append(byte)
        }
    }
}
