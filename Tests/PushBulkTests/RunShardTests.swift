import Foundation
import PushBulk
import Testing

@Suite("RunShard")
struct RunShardTests {
    private static func tokens(_ count: Int) -> [String] {
        (0..<count).map { i in
            String(repeating: String(format: "%08x", i &* 2_654_435_761 & 0xffff_ffff), count: 8)
        }
    }

    @Test("a token's shard is the SHA-256 prefix of its lower-case hex, whatever its case")
    func stable() {
        let token = "AB" + String(repeating: "0", count: 62)
        // The first 8 bytes of SHA-256("ab000…0"): a changed hash would move every token.
        // Worked out independently (Python hashlib): 1 of 4, 93 of 1000.
        #expect(RunShard.index(ofToken: token, among: 4) == 1)
        #expect(RunShard.index(ofToken: token.lowercased(), among: 4) == 1)
        #expect(RunShard.index(ofToken: token, among: 1000) == 93)
        #expect(RunShard.index(ofToken: token, among: 1) == 0)
    }

    @Test("the shards of a list do not depend on its order")
    func orderIndependent() {
        let list = Self.tokens(2_000)
        let forward = list.map { RunShard.index(ofToken: $0, among: 7) }
        let backward = list.reversed().map { RunShard.index(ofToken: $0, among: 7) }
        #expect(forward == Array(backward.reversed()))
    }

    @Test("100,000 tokens divide into 4 shards within 2% of a quarter each, each in exactly one")
    func balanced() {
        var counts = [0, 0, 0, 0]
        for token in Self.tokens(100_000) {
            let held = (0..<4).filter { RunShard(k: $0, n: 4).holds(token: token) }
            #expect(held.count == 1)
            counts[held[0]] += 1
        }
        for count in counts { #expect(abs(count - 25_000) < 500, "\(counts)") }
    }

    @Test("auto reads the first index variable set and names it")
    func autoChoice() {
        #expect(
            RunShard.auto(n: 4, environment: ["SLURM_ARRAY_TASK_ID": "1", "JOB_COMPLETION_INDEX": "2"])
                == .chosen(shard: RunShard(k: 2, n: 4), variable: "JOB_COMPLETION_INDEX")
        )
        #expect(
            RunShard.auto(n: 4, environment: ["AWS_BATCH_JOB_ARRAY_INDEX": "3"])
                == .chosen(shard: RunShard(k: 3, n: 4), variable: "AWS_BATCH_JOB_ARRAY_INDEX")
        )
        #expect(RunShard.auto(n: 4, environment: [:]) == .noVariable)
        #expect(
            RunShard.auto(n: 4, environment: ["SLURM_ARRAY_TASK_ID": "4"])
                == .outOfRange(variable: "SLURM_ARRAY_TASK_ID", value: "4")
        )
        #expect(
            RunShard.auto(n: 4, environment: ["JOB_COMPLETION_INDEX": "x"])
                == .outOfRange(variable: "JOB_COMPLETION_INDEX", value: "x")
        )
    }

    @Test("the header records the shard and a resume of another shard is told both")
    func headerShard() throws {
        var first = BulkRunHeader(
            credential: "sha256:aa",
            template: BulkRunParametersTests.template,
            gateway: "127.0.0.1:2197"
        )
        first.shard = RunShard(k: 1, n: 4)
        #expect(first.jsonLine.contains(#""shard":{"k":1,"n":4}"#))
        let read = try #require(BulkRunHeader.parse(Array(first.jsonLine.utf8.dropLast())))
        #expect(read.shard == RunShard(k: 1, n: 4))
        var other = first
        other.shard = RunShard(k: 2, n: 4)
        #expect(
            first.differences(from: other)
                == ["the shard (shard 1/4 then, shard 2/4 now; resume each shard with its own --shard)"]
        )
        #expect(first.differences(from: read).isEmpty)
    }

    /// Every entry a feed of `path` hands over for `shard`, read to the end.
    private static func entries(_ path: String, shard: RunShard?) async throws -> [TokenEntry] {
        let feed = try TokenFeed.open(path: path, shard: shard)
        feed.start(wake: {})
        var all: [TokenEntry] = []
        while true {
            let (entries, finished) = feed.take()
            all += entries
            if finished { return all }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    private static func key(_ entry: TokenEntry) -> String {
        switch entry {
        case .token(_, let token), .uncertain(_, let token, _, _): token.hex
        case .malformed(_, let text, _): "malformed:" + text
        case .vanished(_, let token, _, _): token
        }
    }

    @Test("a token file's shards hold each line once, a token in any form and a malformed line alike")
    func feedsPartitionTheFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shards-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let hex = Self.tokens(300)
        // The same tokens written three ways (upper case, in angle brackets with spaces, plain),
        // with comments, blank lines and lines that are no token.
        var lines = hex.enumerated().map { index, token -> String in
            switch index % 3 {
            case 0: token.uppercased()
            case 1:
                "<" + stride(from: 0, to: 64, by: 8).map { String(Array(token)[$0..<$0 + 8]) }.joined(separator: " ")
                    + ">"
            default: token + "  # a device"
            }
        }
        lines += ["", "# a comment", "not a token", "abc", String(repeating: "z", count: 2_000)]
        let file = folder.appendingPathComponent("tokens.txt").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let reordered = folder.appendingPathComponent("reordered.txt").path
        try (lines.reversed().joined(separator: "\n") + "\n").write(
            toFile: reordered,
            atomically: true,
            encoding: .utf8
        )

        let whole = try await Self.entries(file, shard: nil).map(Self.key)
        #expect(Set(whole.filter { !$0.hasPrefix("malformed:") }) == Set(hex), "every form read as its token")
        #expect(whole.count == 303)
        var seen: [String: Int] = [:]
        for k in 0..<3 {
            let shard = RunShard(k: k, n: 3)
            let held = try await Self.entries(file, shard: shard).map(Self.key)
            #expect(TokenFeed.countEntries(path: file, shard: shard) == held.count, "shard \(shard)")
            #expect(Set(try await Self.entries(reordered, shard: shard).map(Self.key)) == Set(held), "shard \(shard)")
            for token in held where !token.hasPrefix("malformed:") {
                #expect(shard.holds(token: token), "\(token) handed to shard \(shard)")
            }
            for key in held { seen[key, default: 0] += 1 }
        }
        #expect(Set(seen.keys) == Set(whole), "the shards together hold the whole file")
        #expect(seen.values.allSatisfy { $0 == 1 }, "a line in two shards: \(seen.filter { $0.value > 1 })")
        #expect(TokenFeed.countEntries(path: file) == 303)
    }
}
