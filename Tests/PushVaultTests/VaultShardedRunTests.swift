import Foundation
import LocalGateway
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One token list divided across the workers of a batch system (`send --shard`), each worker a
/// server with only Vault's address and a reader token: four shards run at once by GNU
/// parallel, and four as a Kubernetes Indexed Job runs them (`JOB_COMPLETION_INDEX`), one of
/// them killed and resumed. The gateway's log and its count of what each device shows are the
/// judge; `results summary` over the four files must say the same.
extension VaultStoreCommandTests {
    /// The list and the gateway one divided run sends to.
    struct ShardBench {
        let bench: Bench
        let gateway: RunningGateway
        let log: String
        let tokens: [String]
        let tokenFile: String
        let name: String

        init(
            _ bench: Bench,
            name: String,
            count: Int,
            configure: (inout LocalGateway.Configuration) -> Void
        ) async throws {
            self.bench = bench
            self.name = name
            log = bench.folder.path("\(name)-gateway.jsonl")
            let log = log
            gateway = try await RunningGateway.start(.sandbox) {
                $0.logFile = log
                $0.display = DeviceDisplay.Limits()
                configure(&$0)
            }
            var generator = SystemRandomNumberGenerator()
            tokens = (0..<count).map { _ in
                (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
            }
            tokenFile = bench.folder.path("\(name)-tokens.txt")
            try (tokens.joined(separator: "\n") + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        }

        func results(_ k: Int) -> String { bench.folder.path("\(name)-\(k).jsonl") }

        /// `send` of one alert with the token key in Vault, shard `shard` (`K/N` or `auto/N`).
        func send(shard: String, results: String) -> [String] {
            [
                "send", "key", "--environment", "sandbox", "--tokens", tokenFile, "--shard", shard, "--results",
                results,
                "--alert", "divided", "--quiet", "--gateway", "127.0.0.1:\(gateway.port)", "--ca", gateway.caFile,
                "--store", bench.location,
            ]
        }

        /// What a worker has: Vault's address and the reader's token, a HOME of its own, no
        /// D-Bus session.
        var worker: (environment: [String: String], removed: [String]) {
            let home = bench.folder.path("server-home")
            try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            return (
                ["VAULT_ADDR": bench.server.address, "VAULT_TOKEN": bench.reader, "HOME": home],
                [
                    "APNSCTL_STORE", "BAO_ADDR", "BAO_TOKEN", "VAULT_TOKEN_FILE", "APNSCTL_IDENTITY",
                    "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_DATA_HOME",
                ] + RunShardVariables.all
            )
        }

        /// The tokens of each results file's result lines, and its header's shard.
        func shards() throws -> [(shard: [String: Int], tokens: [String])] {
            try (0..<4).map { k in
                let lines = try String(contentsOfFile: results(k), encoding: .utf8).split(separator: "\n")
                let objects = try lines.map {
                    try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                }
                let header = try #require(objects.first?["run"] as? [String: Any], "\(results(k)) has no header")
                let shard = try #require(header["shard"] as? [String: Int], "\(header)")
                return (shard, objects.filter { $0["line"] != nil }.compactMap { $0["token"] as? String })
            }
        }

        /// `results summary --json` over the four files.
        func summary() throws -> (CLI.Result, [String: Any]) {
            let result = try CLI.run(["results", "summary", "--json"] + (0..<4).map(results))
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            )
            return (result, object)
        }

        /// Every token in exactly one shard's file, each shard's tokens its own by the hash, the
        /// gateway's log and the summary in agreement, nothing shown twice, one provider token.
        func expectDividedOnce(sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let shards = try shards()
            var owner: [String: Int] = [:]
            for (k, shard) in shards.enumerated() {
                #expect(shard.shard == ["k": k, "n": 4], sourceLocation: sourceLocation)
                for token in shard.tokens {
                    #expect(
                        owner[token] == nil,
                        "\(token) in shards \(owner[token] ?? -1) and \(k)",
                        sourceLocation: sourceLocation
                    )
                    owner[token] = k
                }
            }
            #expect(Set(owner.keys) == Set(tokens), "the shards' results are the list", sourceLocation: sourceLocation)

            let records = try await VaultStoreCommandTests.records(log)
            let delivered = Set(records.compactMap { $0["device_token"] as? String })
            #expect(delivered == Set(tokens), "every token delivered", sourceLocation: sourceLocation)
            let display = try #require(gateway.gateway.deviceDisplay?.totals)
            #expect(display.shown == tokens.count, "\(display)", sourceLocation: sourceLocation)
            #expect(display.devicesShownTwice == 0, "\(display)", sourceLocation: sourceLocation)
            // The one provider token the fleet shares: every shard presented it.
            let issued = Set(records.compactMap { ($0["token_iat"] as? NSNumber)?.intValue })
            #expect(issued.count == 1, "provider tokens issued at \(issued.sorted())", sourceLocation: sourceLocation)

            let (result, summary) = try summary()
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
            let totals = try #require(summary["totals"] as? [String: Any], "\(summary)")
            #expect(totals["accepted"] as? Int == delivered.count, "\(totals)", sourceLocation: sourceLocation)
            #expect(totals["results"] as? Int == tokens.count, "\(totals)", sourceLocation: sourceLocation)
            let run = try #require(summary["run"] as? [String: Any])
            #expect(run["shards"] as? Int == 4, sourceLocation: sourceLocation)
        }
    }

    /// The index variables of the batch systems, kept out of a worker's environment unless the
    /// test sets one.
    enum RunShardVariables {
        static let all = ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX", "SLURM_ARRAY_TASK_ID"]
    }

    @Test("Four shards run at once by GNU parallel send each token of one list once, with one provider token")
    func fourShardsByParallel() async throws {
        let bench = try await Bench(try server())
        try bench.importBoth()
        let run = try await ShardBench(bench, name: "parallel", count: 4_000) { _ in }
        defer { Task { await run.gateway.stop() } }
        let worker = run.worker
        // As a batch of workers runs it: one command, K filled in by parallel.
        let command =
            ([CLI.throughputBinary] + run.send(shard: "{}/4", results: run.bench.folder.path("parallel-{}.jsonl")))
        let parallel = try CLI.runProgram(
            "/usr/bin/parallel",
            ["--will-cite", "--halt", "never", "--jobs", "4"] + command + [":::", "0", "1", "2", "3"],
            environment: worker.environment,
            removeEnvironment: worker.removed,
            timeout: 300
        )
        #expect(parallel.status == 0, "\(parallel.stdout)\(parallel.stderr)")
        for secret in [bench.reader, bench.writer] { #expect(!parallel.stderr.contains(secret)) }
        try await run.expectDividedOnce()
    }

    @Test("Four shards as a Kubernetes Indexed Job: one killed and resumed, a resume of the wrong K refused")
    func fourShardsAsAnIndexedJob() async throws {
        let bench = try await Bench(try server())
        try bench.importBoth()
        // Slow enough to kill a worker mid-run: 20 streams, 20 ms an answer (some 1,000/s).
        let run = try await ShardBench(bench, name: "indexed", count: 8_000) {
            $0.faults.latency = 0.02
            $0.faults.maxConcurrentStreams = 20
        }
        defer { Task { await run.gateway.stop() } }
        let worker = run.worker
        var workers: [Process] = []
        for k in 0..<4 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.throughputBinary)
            process.arguments = run.send(shard: "auto/4", results: run.results(k))
            var environment = ProcessInfo.processInfo.environment
            for name in worker.removed { environment.removeValue(forKey: name) }
            environment.merge(worker.environment) { $1 }
            // As Kubernetes sets it for an Indexed Job's pod: the completion index, from 0.
            environment["JOB_COMPLETION_INDEX"] = String(k)
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            workers.append(process)
        }
        // Worker 1 is killed once it has written 300 results (its pod evicted).
        let started = waitUntil(timeout: 120) {
            ((try? String(contentsOfFile: run.results(1), encoding: .utf8))?.split(separator: "\n").count ?? 0) > 300
        }
        #expect(started, "worker 1 wrote no 300 results in 2 minutes")
        kill(workers[1].processIdentifier, SIGKILL)
        for process in workers { process.waitUntilExit() }
        #expect(workers[1].terminationReason == .uncaughtSignal)
        for k in [0, 2, 3] { #expect(workers[k].terminationStatus == 0, "worker \(k)") }

        // The summary says what is left and how to continue the killed shard.
        let (stopped, summary) = try run.summary()
        #expect(stopped.status == 1, "\(stopped.stdout)\(stopped.stderr)")
        let files = try #require(summary["files"] as? [[String: Any]])
        let unfinished = files.filter { $0["state"] as? String != "finished" }
        #expect(unfinished.count == 1 && unfinished.first?["path"] as? String == run.results(1), "\(files)")
        let command = try #require(unfinished.first?["resume_command"] as? String, "\(unfinished)")
        // K/N as the worker resolved it: the resume is the same shard on any machine.
        #expect(command.contains("--shard 1/4"), "\(command)")

        // The same resume as another shard is refused, naming both; nothing is sent.
        let before = try await VaultStoreCommandTests.records(run.log).count
        let wrong = try CLI.runProgram(
            "/bin/bash",
            ["-c", command.replacingOccurrences(of: "--shard 1/4", with: "--shard 2/4")],
            environment: worker.environment,
            removeEnvironment: worker.removed
        )
        wrong.exited(64, stderr: "shard 1/4 then, shard 2/4 now")
        #expect(try await VaultStoreCommandTests.records(run.log).count == before, "a refused resume sent nothing")

        // Pasted as printed, it finishes the shard.
        let resumed = try CLI.runProgram(
            "/bin/bash",
            ["-c", command],
            environment: worker.environment,
            removeEnvironment: worker.removed,
            timeout: 300
        )
        #expect(resumed.status == 0, "\(command)\n\(resumed.stderr)")
        try await run.expectDividedOnce()
    }
}
