import Foundation
import Testing

@testable import PushBulk

/// `results summary` and `results tokens` in the library: results files written by the bulk
/// run's own writer (``BulkRun``, ``BulkResult/jsonLine``, the end record), read back as one run.
struct RunSummaryTests {
    typealias Fixture = BulkRunTests

    /// A header line that records its options, as `send --tokens` writes it, with a shard when
    /// given (`"shard":{"k":K,"n":N}`, as a sharded run records it).
    static func headerLine(
        topic: String = "com.example.app",
        environment: String = "sandbox",
        shard: RunShard? = nil
    )
        -> String
    {
        let shardText = shard.map { #""shard":{"k":\#($0.k),"n":\#($0.n)},"# } ?? ""
        return
            #"{"run":{"collapse_id":null,"command":{"connections":1,"credential":"app.p12","options":{"alert":["hi"],"environment":["\#(environment)"],"password-env":["P"]},"tokens":"tokens.txt"},"credential":"sha256:aa","expiration":null,"gateway":"127.0.0.1:2197","payload_sha256":"9f86","priority":null,"push_type":"alert",\#(shardText)"tokens_fingerprint":"10:ab","topic":"\#(topic)","version":4}}"#
            + "\n"
    }

    static func accepted(_ line: Int) -> BulkResult {
        Fixture.result(line: line, token: Fixture.token(UInt8(line % 256)))
    }

    static func rejected(_ line: Int, _ reason: APNsReason, status: Int = 400, timestamp: Date? = nil) -> BulkResult {
        BulkResult(
            line: line,
            token: Fixture.token(UInt8(line % 256)),
            status: status,
            reason: reason,
            apnsID: UUID().uuidString.lowercased(),
            attempts: 1,
            timestamp: timestamp
        )
    }

    /// Writes a finished results file: the header, the results, the end record.
    static func write(_ path: String, header: String, results: [BulkResult], finished: Bool = true) throws {
        var text = header + results.map(\.jsonLine).joined()
        if finished { text += BulkEndRecord(credential: "sha256:aa", results: results.count).jsonLine }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func everyOutcomeIsCountedOnceAndLinesWithoutAFinalAnswerAreLeftToSend() throws {
        let folder = Fixture.Folder()
        let path = folder.file("sent.jsonl")
        let token = Fixture.token(9)
        let results = [
            Self.accepted(1),
            BulkResult(line: 2, token: Fixture.token(2), status: 200, apnsID: "a", attempts: 2, uncertain: true),
            Self.rejected(3, .unregistered, status: 410, timestamp: Date(timeIntervalSince1970: 1_700_000_000.5)),
            Self.rejected(4, .badDeviceToken),
            // An answer whose reason never came (a status, then a reset): counted by its status.
            BulkResult(line: 5, token: Fixture.token(5), status: 400, apnsID: "b", attempts: 1),
            BulkResult(line: 6, token: Fixture.token(6), attempts: 5, uncertain: true, error: .timeout, message: "m"),
            BulkResult(line: 7, token: token, apnsID: "c", attempts: 1, uncertain: true, error: .outcomeUnknown),
            BulkResult(line: 8, token: "not-a-token", attempts: 0, error: .malformedToken, message: "bad"),
        ]
        try Self.write(path, header: Self.headerLine(), results: results)

        let summary = try RunSummary.read([path])
        let totals = summary.totals
        #expect(totals.results == 8 && totals.accepted == 2)
        #expect(totals.rejected == ["Unregistered": 1, "BadDeviceToken": 1, "HTTP 400": 1])
        #expect(totals.failed == ["timeout": 1])
        #expect(totals.outcomeUnknown == 1 && totals.malformed == 1 && totals.uncertain == 3)
        #expect(summary.leftToSend == RunSummary.LeftToSend(withoutFinalAnswer: 2))
        #expect(summary.files.map(\.state) == [.finished] && summary.files[0].continuation == nil)
        #expect(!summary.isComplete)
        #expect(summary.run?.environment == "sandbox" && summary.run?.shards == nil)

        var unregistered: [RunSummary.ListedToken] = []
        _ = try RunSummary.tokens(.unregistered, in: [path]) { unregistered.append($0) }
        #expect(unregistered.map(\.token) == [Fixture.token(3)])
        #expect(unregistered.first?.timestamp == "2023-11-14T22:13:20.500Z")
        var unanswered: [String] = []
        _ = try RunSummary.tokens(.unanswered, in: [path]) { unanswered.append($0.token) }
        #expect(unanswered == [Fixture.token(6), token], "failed and outcome_unknown; never a malformed line")
    }

    @Test func everyLineTheWriterWritesIsReadBackWhole() throws {
        let plain = Self.accepted(3)
        let lines = [
            plain,
            BulkResult(line: 2, token: Fixture.token(2), status: 200, apnsID: "a", attempts: 2, uncertain: true),
            Self.rejected(4, .unregistered, status: 410, timestamp: Date(timeIntervalSince1970: 1_700_000_000)),
            BulkResult(line: 6, token: Fixture.token(6), attempts: 5, uncertain: true, error: .timeout, message: "m"),
            BulkResult(line: 8, token: "\"quoted\" and \\ \u{7}", attempts: 0, error: .malformedToken, message: "bad"),
        ]
        for result in lines {
            let bytes = Array(result.jsonLine.utf8.dropLast())
            let read = try #require(BulkResult.parse(bytes), "\(result.jsonLine)")
            #expect(
                read == BulkResult.decode(bytes, using: JSONDecoder()),
                "the quick path reads what the decoder reads"
            )
            #expect(read.line == result.line && read.token == result.token && read.status == result.status)
            #expect(read.reason == result.reason?.rawValue && read.apnsID == result.apnsID)
            #expect(read.attempts == result.attempts && read.uncertain == result.uncertain)
            #expect(read.error == result.error?.rawValue && read.message == result.message)
            #expect((read.timestamp != nil) == (result.timestamp != nil))
            // Only the plain accepted line is read without the decoder.
            #expect((BulkResult.parsePlainAccepted(bytes) != nil) == (result == plain), "\(result.jsonLine)")
        }
        #expect(BulkResult.parse(Array(#"{"line":1,"token":"ab","status":200,"reason":null"#.utf8)) == nil)
        #expect(BulkResult.parse(Array(#"{"run":{}}"#.utf8)) == nil)
    }

    @Test func theShardsOfOneRunAddUpAndTheUnfinishedOneSaysHowToContinue() throws {
        let folder = Fixture.Folder()
        var paths: [String] = []
        for k in 0..<3 {
            let path = folder.file("shard-\(k).jsonl")
            try Self.write(
                path,
                header: Self.headerLine(shard: RunShard(k: k, n: 4)),
                results: (1...5).map { Self.accepted(k * 10 + $0) }
            )
            paths.append(path)
        }
        // The fourth shard was killed: two results, one send in its journal without a result.
        let killed = folder.file("shard-3.jsonl")
        try Self.write(
            killed,
            header: Self.headerLine(shard: RunShard(k: 3, n: 4)),
            results: [Self.accepted(31), Self.accepted(32)],
            finished: false
        )
        let journal = try AppendFile.open(path: killed + ".journal")
        let output = BulkOutput(results: try AppendFile.open(path: folder.file("unused")), journal: journal)
        output.journalSend(line: 33, token: Fixture.token(33), apnsID: UUID().uuidString.lowercased(), attempt: 1)
        output.flushJournal()
        output.close()
        paths.append(killed)

        let summary = try RunSummary.read(paths)
        #expect(summary.totals.results == 17 && summary.totals.accepted == 17)
        #expect(summary.run?.shards == 4)
        #expect(summary.files.map(\.state) == [.finished, .finished, .finished, .interrupted])
        #expect(summary.leftToSend == RunSummary.LeftToSend(unfinishedFiles: 1, inFlight: 1))
        let continuation = try #require(summary.files[3].continuation)
        #expect(continuation.resultsPath == killed)
        #expect(continuation.parameters.credential == "app.p12" && continuation.parameters.tokens == "tokens.txt")
        #expect(summary.files[3].outcomes.results == 2)
        #expect(!summary.isComplete)

        // Three of four shards: the missing one is said, and the run is not complete.
        let three = try RunSummary.read(Array(paths.prefix(3)))
        #expect(three.leftToSend.shardsNotGiven == 1)
        #expect(three.warnings.map(\.code) == [.shardsNotGiven])
        #expect(three.warnings.first?.message.contains("0/4, 1/4, 2/4") == true)
        #expect(!three.isComplete)
        // A file given twice counts once.
        #expect(try RunSummary.read(Array(paths.prefix(3)) + [paths[0]]).totals.results == 15)
    }

    @Test func filesOfDifferentRunsAreRefusedNamingWhatDiffers() throws {
        let folder = Fixture.Folder()
        let first = folder.file("a.jsonl")
        try Self.write(first, header: Self.headerLine(shard: RunShard(k: 0, n: 2)), results: [Self.accepted(1)])
        let cases: [(String, String, String)] = [
            ("topic", Self.headerLine(topic: "com.example.other", shard: RunShard(k: 1, n: 2)), "the topic"),
            ("shards", Self.headerLine(shard: RunShard(k: 1, n: 3)), "the shards (shard 0/2 there, shard 1/3 here)"),
            ("whole", Self.headerLine(), "a whole run here"),
            (
                "tokens",
                Self.headerLine(shard: RunShard(k: 1, n: 2)).replacingOccurrences(of: "10:ab", with: "11:cd"),
                "the token file"
            ),
        ]
        for (name, header, words) in cases {
            let other = folder.file("\(name).jsonl")
            try Self.write(other, header: header, results: [Self.accepted(2)])
            let error = #expect(throws: BulkRunError.self, "\(name)") { try RunSummary.read([first, other]) }
            #expect(error?.code == .runsDiffer, "\(name)")
            #expect(error?.path == other && error?.message.contains(words) == true, "\(name): \(error?.message ?? "")")
            #expect(error?.message.contains(first) == true)
            #expect(throws: BulkRunError.self) { try RunSummary.tokens(.unregistered, in: [first, other]) { _ in } }
        }
    }

    @Test func manyBadDeviceTokenAnswersFromOneEnvironmentAreCalledTokensOfTheOther() throws {
        let folder = Fixture.Folder()
        // (BadDeviceToken, other rejections, environment, warned)
        let cases: [(Int, Int, String, Bool)] = [
            (20, 19, "sandbox", true), (19, 0, "sandbox", false), (20, 20, "sandbox", false),
            (30, 5, "production", true),
        ]
        for (bad, others, environment, warned) in cases {
            let path = folder.file("\(bad)-\(others)-\(environment).jsonl")
            let results =
                (0..<bad).map { Self.rejected($0 + 1, .badDeviceToken) }
                + (0..<others).map { Self.rejected(bad + $0 + 1, .unregistered, status: 410, timestamp: Date()) }
                + [Self.accepted(500)]
            try Self.write(path, header: Self.headerLine(environment: environment), results: results)
            let summary = try RunSummary.read([path])
            let warning = summary.warnings.first { $0.code == .tokensOfOtherEnvironment }
            #expect((warning != nil) == warned, "\(bad) of \(bad + others) in \(environment)")
            var listed = 0
            let warnings = try RunSummary.tokens(.badDeviceToken, in: [path]) { _ in listed += 1 }
            #expect(listed == bad)
            #expect(warnings == (warning.map { [$0] } ?? []), "results tokens --bad says the same")
            guard let warning else { continue }
            #expect(warning.message.contains("\(bad) of the \(bad + others) rejections are BadDeviceToken"))
            #expect(warning.message.contains("Do not delete them"))
            let other = environment == "sandbox" ? "production builds" : "development builds"
            #expect(warning.message.contains(other), "\(warning.message)")
        }
    }

    @Test func whatCannotBeReadIsRefusedWithItsCauseAndAnUnfinishedRunWithoutItsJournalIsSaid() throws {
        let folder = Fixture.Folder()
        let missing = #expect(throws: BulkRunError.self) { try RunSummary.read([folder.file("none.jsonl")]) }
        #expect(missing?.code == .resultsUnreadable && missing?.message.contains("no such file") == true)
        let isFolder = #expect(throws: BulkRunError.self) { try RunSummary.read([folder.path]) }
        #expect(isFolder?.message.contains("folder") == true)
        let notResults = folder.file("notes.txt")
        try (Self.headerLine() + "hello\n").write(toFile: notResults, atomically: true, encoding: .utf8)
        let wrong = #expect(throws: BulkRunError.self) { try RunSummary.read([notResults]) }
        #expect(wrong?.code == .notAResultsFile && wrong?.message.contains("Line 2") == true)

        // Killed, and its journal deleted: the resume would be refused, and the summary says so.
        let orphan = folder.file("orphan.jsonl")
        try Self.write(orphan, header: Self.headerLine(), results: [Self.accepted(1)], finished: false)
        let summary = try RunSummary.read([orphan])
        #expect(summary.files.map(\.state) == [.journalMissing])
        #expect(summary.warnings.map(\.code) == [.journalMissing])
        #expect(summary.files[0].continuation != nil)
        #expect(summary.leftToSend.unfinishedFiles == 1)

        // Results printed to standard output (no header): summed alone, refused beside a run.
        let printed = folder.file("printed.jsonl")
        try (Self.accepted(1).jsonLine).write(toFile: printed, atomically: true, encoding: .utf8)
        let alone = try RunSummary.read([printed])
        #expect(alone.run == nil && alone.files.map(\.state) == [.notResumable] && alone.totals.accepted == 1)
        let finished = folder.file("finished.jsonl")
        try Self.write(finished, header: Self.headerLine(), results: [Self.accepted(2)])
        let mixed = #expect(throws: BulkRunError.self) { try RunSummary.read([finished, printed]) }
        #expect(mixed?.code == .notAResultsFile && mixed?.path == printed)
    }
}
