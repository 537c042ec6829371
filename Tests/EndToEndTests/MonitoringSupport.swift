import Foundation
import Glibc
import TestSupport
import Testing

/// What the monitoring tests share: a store with minted certificates, `apnsctl exporter` as a
/// process, scrapes with curl, and Prometheus' own parser (prometheus_client) to read them.
enum Monitoring {
    struct Sample: Sendable {
        var labels: [String: String]
        var value: Double
    }

    struct Family: Sendable {
        var type: String
        var help: String
        var samples: [String: [Sample]]
    }

    /// Parses exposition text with prometheus_client: family name → type, help and samples.
    /// A sample with a timestamp fails the parse here, as node_exporter's collector refuses one.
    static func parse(_ text: String) throws -> [String: Family] {
        let file = try Fixtures.temporaryFile("scrape.prom", contents: text)
        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let parsed = try CLI.runProgram(
            python,
            [
                "-c",
                """
                import json, sys
                from prometheus_client.parser import text_string_to_metric_families
                out = {}
                for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                    samples = {}
                    for sample in family.samples:
                        assert sample.timestamp is None, "a sample carries a timestamp: " + sample.name
                        samples.setdefault(sample.name, []).append([sample.labels, sample.value])
                    out[family.name] = {"type": family.type, "help": family.documentation, "samples": samples}
                print(json.dumps(out))
                """, file,
            ]
        )
        try #require(parsed.status == 0, "prometheus_client could not parse it: \(parsed.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: Any])
        var families: [String: Family] = [:]
        for (name, value) in json {
            let family = try #require(value as? [String: Any])
            var samples: [String: [Sample]] = [:]
            for (sampleName, list) in family["samples"] as? [String: [[Any]]] ?? [:] {
                samples[sampleName] = list.map {
                    Sample(labels: $0[0] as? [String: String] ?? [:], value: ($0[1] as? NSNumber)?.doubleValue ?? .nan)
                }
            }
            families[name] = Family(
                type: family["type"] as? String ?? "",
                help: family["help"] as? String ?? "",
                samples: samples
            )
        }
        return families
    }

    /// The samples named `name` in a parse.
    static func samples(_ families: [String: Family], _ name: String) -> [Sample] {
        families.values.flatMap { $0.samples[name] ?? [] }
    }

    /// A store at `folder/store` holding minted certificates, imported as `alias`.
    static func store(
        in folder: TemporaryFolder,
        _ credentials: [(alias: String, bundle: String, days: Int, environments: TestPKI.Environments)]
    ) throws -> String {
        let store = folder.path("store")
        for credential in credentials {
            let bundle = try TestPKI.mint(
                in: folder,
                name: credential.alias,
                bundle: credential.bundle,
                days: credential.days,
                environments: credential.environments
            )
            let imported = try CLI.run(["import", bundle, "--store", store, "--alias", credential.alias])
            try #require(imported.status == 0, "import \(credential.alias): \(imported.stderr)")
        }
        return store
    }

    /// GETs a URL on loopback: the HTTP status and the body.
    static func get(_ url: String) throws -> (status: Int, body: String) {
        let result = try CLI.runProgram("curl", ["-s", "-w", "\n%{http_code}", url], timeout: 30)
        guard result.status == 0, let newline = result.stdout.lastIndex(of: "\n") else { return (0, "") }
        return (Int(result.stdout[result.stdout.index(after: newline)...]) ?? 0, String(result.stdout[..<newline]))
    }

    /// Waits until `url` answers (bounded), for servers the tests start.
    static func waitUntilServing(_ url: String, process: Process) throws {
        let served = try waitUntil {
            if try get(url).status != 0 { return true }
            try #require(process.isRunning, "the server exited before serving \(url)")
            return false
        }
        if !served { Issue.record("\(url) never answered") }
    }
}

/// `apnsctl exporter` as a child process on a free loopback port.
final class ExporterProcess: @unchecked Sendable {
    let process = Process()
    let port: Int
    let errors: String

    /// `descriptorLimit` starts it under that soft limit of open files (`ulimit -n`, through
    /// sh, which then execs it: the process is the exporter's). With `waitUntilServing` false
    /// the caller waits for it (an HTTPS exporter does not answer plain HTTP).
    init(
        _ folder: TemporaryFolder,
        store: String,
        arguments: [String],
        environment: [String: String] = [:],
        descriptorLimit: Int? = nil,
        waitUntilServing: Bool = true
    ) throws {
        port = try ProxyCommandTests.closedPort()
        errors = folder.path("exporter-\(port).err")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        let command = ["exporter", "--store", store, "--listen", "127.0.0.1:\(port)"] + arguments
        if let descriptorLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", CLI.binary] + command
        } else {
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = command
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
        if waitUntilServing { try Monitoring.waitUntilServing(url("/"), process: process) }
    }

    /// The exporter's open file descriptors, from /proc.
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? -1
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func get(_ path: String) throws -> (status: Int, body: String) { try Monitoring.get(url(path)) }

    var log: String { (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "" }

    /// SIGTERM, and the exit status.
    func stop() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGTERM)
        if !process.waitForExit() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    deinit { _ = stop() }
}
