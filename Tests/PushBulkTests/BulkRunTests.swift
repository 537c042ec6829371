import Foundation
import Testing

@testable import PushBulk

/// The file lifecycle of a bulk run, without a socket: what a resume reads back, what it
/// refuses, and what is left when the run ends.
struct BulkRunTests {
    static func header(credential: String = "sha256:aa", topic: String = "com.example.app") -> BulkRunHeader {
        let line =
            #"{"run":{"collapse_id":null,"credential":"\#(credential)","expiration":null,"gateway":"127.0.0.1:2197","payload_sha256":"9f86","priority":null,"push_type":"alert","topic":"\#(topic)","version":1}}"#
        return BulkRunHeader.parse(Array(line.utf8))!
    }

    static func token(_ seed: UInt8) -> String { (0..<32).map { String(format: "%02x", seed &+ UInt8($0)) }.joined() }

    final class Folder {
        let path = NSTemporaryDirectory() + "bulkrun-\(UUID().uuidString)"
        init() { try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        func file(_ name: String) -> String { path + "/" + name }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static func result(line: Int, token: String) -> BulkResult {
        BulkResult(line: line, token: token, status: 200, apnsID: UUID().uuidString.lowercased(), attempts: 1)
    }

    @Test func aResumeOfAnotherRunIsRefusedAndChangesNothing() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Self.header(), results: results, resume: nil)
        run.output.record(Self.result(line: 1, token: Self.token(1)))
        _ = run.conclude(BulkSummary(), tokensRead: 1)
        let before = try Data(contentsOf: URL(fileURLWithPath: results))
        #expect(throws: BulkRunError.self) {
            _ = try BulkRun.open(header: Self.header(topic: "com.example.other"), results: nil, resume: results)
        }
        let error = #expect(throws: BulkRunError.self, "another credential was accepted without a credential stop") {
            try BulkRun.open(header: Self.header(credential: "sha256:bb"), results: nil, resume: results)
        }
        #expect(error?.code == .runMismatch && error?.message.contains("the credential") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: results)) == before)
    }

    @Test func aTornLastLineIsCutAndTheRestIsDoneByToken() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let text =
            Self.header().jsonLine + Self.result(line: 1, token: Self.token(1)).jsonLine
            + Self.result(line: 2, token: Self.token(2)).jsonLine + #"{"line":3,"token":"\#(Self.token(3))","sta"#
        try text.write(toFile: results, atomically: true, encoding: .utf8)
        // The crash that tore the line left the run's journal beside it (here, empty).
        try Data().write(to: URL(fileURLWithPath: results + ".journal"))
        let run = try BulkRun.open(header: Self.header(), results: nil, resume: results)
        let state = try #require(run.state)
        #expect(state.finalCount == 2)
        #expect(state.status(token: try DeviceToken(Self.token(2))) == .done)
        #expect(state.status(token: try DeviceToken(Self.token(3))) == .pending)
        run.output.record(Self.result(line: 3, token: Self.token(3)))
        _ = run.conclude(BulkSummary(), tokensRead: 3)
        let lines = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 5 && lines.allSatisfy { $0.hasSuffix("}") }, "the torn line is gone: \(lines)")
        #expect(lines.last?.hasPrefix(#"{"end":"#) == true, "the complete run ends with its end record")
    }

    @Test func committedInFlightEntriesAreUncertainAndATornGroupIsIgnored() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Self.header(), results: results, resume: nil)
        let id = UUID()
        run.output.journalSend(line: 1, token: Self.token(1), apnsID: id.uuidString.lowercased(), attempt: 1)
        run.output.journalSend(line: 2, token: Self.token(2), apnsID: UUID().uuidString.lowercased(), attempt: 1)
        run.output.journalSend(line: 3, token: Self.token(3), apnsID: UUID().uuidString.lowercased(), attempt: 1)
        run.output.flushJournal()
        run.output.journalClear(line: 3)  // not processed
        run.output.record(Self.result(line: 2, token: Self.token(2)))
        run.output.flushResults()
        run.output.flushJournal()
        // A group cut by a full disk: no commit record.
        run.output.journal?.append("S 4 \(Self.token(4)) \(UUID().uuidString.lowercased()) 1\nS 5 ")
        run.output.journal?.flush()
        run.release()  // killed: nothing concluded

        let state = try ResumeState.load(resultsPath: results)
        #expect(state.status(token: try DeviceToken(Self.token(1))) == .uncertain(apnsID: id, attempts: 1))
        #expect(state.status(token: try DeviceToken(Self.token(2))) == .done)
        #expect(state.status(token: try DeviceToken(Self.token(3))) == .pending)
        #expect(state.status(token: try DeviceToken(Self.token(4))) == .pending, "a torn group was never sent")
        #expect(state.inFlight.count == 1 && state.isUnfinished)
    }

    @Test func aResultsWriteFailureStopsTheRunAndKeepsTheJournal() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Self.header(), results: results, resume: nil)
        run.output.journalSend(line: 1, token: Self.token(1), apnsID: UUID().uuidString.lowercased(), attempt: 1)
        run.output.flushJournal()
        struct DiskFull: Error, CustomStringConvertible { var description: String { "no space left on the device" } }
        run.output.results.beforeWrite = { throw DiskFull() }
        run.output.record(Self.result(line: 1, token: Self.token(1)))
        var summary = BulkSummary()
        summary.results = 1
        summary = run.conclude(summary, tokensRead: 1)
        #expect(summary.stoppedBy == .outputFailed)
        #expect(summary.stopMessage?.contains("no space left") == true)
        #expect(summary.resultsWritten == 0)
        #expect(FileManager.default.fileExists(atPath: results + ".journal"))
        let state = try ResumeState.load(resultsPath: results)
        #expect(state.inFlight.count == 1, "the lost result's line stays in flight: outcome_unknown, not resent")
    }

    @Test func theJournalIsDeletedOnlyWhenTheRunIsComplete() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let stopped = try BulkRun.open(header: Self.header(), results: results, resume: nil)
        var summary = BulkSummary()
        summary.stoppedBy = .credentialRejected
        summary.stopReason = "BadCertificateEnvironment"
        _ = stopped.conclude(summary, tokensRead: 5)
        #expect(FileManager.default.fileExists(atPath: results + ".journal"))
        // After a credential stop another credential may continue, and the file records it.
        let resumed = try BulkRun.open(header: Self.header(credential: "sha256:bb"), results: nil, resume: results)
        #expect(resumed.credentialChanged)
        #expect(resumed.state?.lastStop?.reason == "BadCertificateEnvironment")
        // Nothing read while the run is unfinished: an error, and the journal stays.
        let empty = resumed.conclude(BulkSummary(), tokensRead: 0)
        #expect(empty.stoppedBy == .noTokens)
        #expect(FileManager.default.fileExists(atPath: results + ".journal"))

        let complete = try BulkRun.open(header: Self.header(credential: "sha256:bb"), results: nil, resume: results)
        _ = complete.conclude(BulkSummary(), tokensRead: 5)
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"))
    }

    @Test func aSecondRunOfTheSameResultsIsRefusedWhileTheFirstHoldsIt() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let first = try BulkRun.open(header: Self.header(), results: results, resume: nil)
        let error = #expect(throws: BulkRunError.self, "a second run took a results file in use") {
            try BulkRun.open(header: Self.header(), results: nil, resume: results)
        }
        #expect(error?.code == .resultsLocked)
        first.release()
        let second = try BulkRun.open(header: Self.header(), results: nil, resume: results)
        second.release()
    }

    /// A run killed with its journal deleted (or its results file moved without it): which
    /// notifications were in flight cannot be known, so a resume is refused with the bound, and
    /// goes on only when asked to take that risk.
    @Test func aResumeOfAnUnfinishedRunWithoutItsJournalIsRefusedUnlessAccepted() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Self.header(), results: results, resume: nil)
        run.output.journalSend(line: 2, token: Self.token(2), apnsID: UUID().uuidString.lowercased(), attempt: 1)
        run.output.flushJournal()
        run.output.record(Self.result(line: 1, token: Self.token(1)))
        run.output.flushResults()
        run.release()  // killed: no stop record, no end record; then the journal is deleted
        #expect(unlink(results + ".journal") == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: results))
        #expect(try ResumeState.load(resultsPath: results).journalMissing)
        let error = #expect(throws: BulkRunError.self, "a resume without the journal of an unfinished run was accepted")
        {
            try BulkRun.open(header: Self.header(), results: nil, resume: results)
        }
        #expect(error?.code == .journalMissing)
        #expect(error?.message.contains("up to 1000 notifications") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("r.jsonl.journal") == true)
        #expect(error?.failure == .problem)
        #expect(try Data(contentsOf: URL(fileURLWithPath: results)) == before, "a refused resume changes nothing")
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"), "and makes no journal")

        let accepted = try BulkRun.open(
            header: Self.header(),
            results: nil,
            resume: results,
            acceptMissingJournal: true
        )
        #expect(accepted.state?.status(token: try DeviceToken(Self.token(1))) == .done)
        #expect(accepted.state?.status(token: try DeviceToken(Self.token(2))) == .pending, "sent again, as accepted")
        accepted.release()
    }

    /// A complete run ends its file with an end record and deletes its journal: resuming it
    /// (a token file that grew) needs no journal; a result after the end makes it unfinished again.
    @Test func aFinishedRunNeedsNoJournalAndNewResultsMakeItUnfinished() throws {
        let folder = Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Self.header(), results: results, resume: nil)
        run.output.record(Self.result(line: 1, token: Self.token(1)))
        var summary = BulkSummary()
        summary.results = 1
        _ = run.conclude(summary, tokensRead: 1)
        let text = try String(contentsOfFile: results, encoding: .utf8)
        #expect(text.hasSuffix(#"{"end":{"credential":"sha256:aa","results":1}}"# + "\n"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"))
        let state = try ResumeState.load(resultsPath: results)
        #expect(state.finished && !state.journalMissing && !state.isUnfinished)

        let grown = try BulkRun.open(header: Self.header(), results: nil, resume: results)
        grown.release()  // killed before its first result, and its new journal deleted
        #expect(unlink(results + ".journal") == 0)
        #expect(
            try ResumeState.load(resultsPath: results).journalMissing,
            "the continuing run cut the end record: unfinished before anything is sent"
        )
        let again = try BulkRun.open(header: Self.header(), results: nil, resume: results, acceptMissingJournal: true)
        again.output.record(Self.result(line: 2, token: Self.token(2)))
        again.output.flushResults()
        again.release()  // killed after one more result, and its journal deleted
        #expect(unlink(results + ".journal") == 0)
        #expect(try ResumeState.load(resultsPath: results).journalMissing, "a result after the end: unfinished")
        // Finished at last: the end record counts every result line of the file.
        let last = try BulkRun.open(header: Self.header(), results: nil, resume: results, acceptMissingJournal: true)
        last.output.record(Self.result(line: 3, token: Self.token(3)))
        var ended = BulkSummary()
        ended.results = 1
        _ = last.conclude(ended, tokensRead: 3)
        let final = try String(contentsOfFile: results, encoding: .utf8)
        #expect(final.hasSuffix(#"{"end":{"credential":"sha256:aa","results":3}}"# + "\n"), "\(final)")
        #expect(final.components(separatedBy: #"{"end":"#).count == 2, "one end record, last: \(final)")
    }
}
