import Foundation
import SystemPackage
import Testing

@testable import PushBulk

/// More of a bulk run's file lifecycle without a socket: a real device that refuses writes, a
/// run that fails before sending, and each part of the header a resume compares.
struct BulkRunLifecycleTests {
    typealias Fixture = BulkRunTests

    @Test func aResultsFileOnAFullDeviceFailsWithTheDevicesWordsAndCountsNothingWritten() throws {
        // /dev/full refuses every write with ENOSPC, as a full disk does: no injected failure.
        let full = try AppendFile.open(path: "/dev/full")
        let folder = Fixture.Folder()
        let journal = try AppendFile.open(path: folder.file("r.jsonl.journal"))
        let output = BulkOutput(results: full, journal: journal)
        output.journalSend(line: 1, token: Fixture.token(1), apnsID: UUID().uuidString.lowercased(), attempt: 1)
        output.flushJournal()
        output.record(Fixture.result(line: 1, token: Fixture.token(1)))
        output.flushResults()
        #expect(output.resultsFailure == "no space left on the device")
        #expect(output.failureRemedy.contains("Free some disk space"))
        #expect(output.journalFailure == nil, "the journal on a disk with space is unaffected")
        #expect(full.linesWritten == 0)
        // Nothing is written after the first failure, and the failure stays the first one.
        output.record(Fixture.result(line: 2, token: Fixture.token(2)))
        output.flushResults()
        #expect(full.linesWritten == 0 && output.failure == "no space left on the device")
        output.close()
    }

    @Test func aFileThatRefusesWritesForAnotherReasonIsNotCalledAFullDisk() throws {
        // A descriptor the system will not write through (opened for reading): the remedy names
        // what stopped the writes, not disk space; and each cause the system names has its own.
        let folder = Fixture.Folder()
        let path = folder.file("r.jsonl")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let readOnly = try FileDescriptor.open(path, .readOnly)
        let results = AppendFile(descriptor: readOnly, path: path, ownsDescriptor: true)
        let output = BulkOutput(results: results, journal: nil)
        output.record(Fixture.result(line: 1, token: Fixture.token(1)))
        output.flushResults()
        #expect(output.resultsFailure != nil)
        #expect(!output.failureRemedy.contains("disk space"), "\(output.failureRemedy)")
        #expect(AppendFile.remedy(for: .notPermitted).contains("writable"))
        #expect(AppendFile.remedy(for: .readOnlyFileSystem).contains("read-only"))
        #expect(AppendFile.remedy(for: .noSpace).contains("disk space"))
        output.close()
    }

    @Test func aJournalOnAFullDeviceIsAFailureBeforeAnythingIsSent() throws {
        let folder = Fixture.Folder()
        let results = try AppendFile.open(path: folder.file("r.jsonl"))
        let output = BulkOutput(results: results, journal: try AppendFile.open(path: "/dev/full"))
        output.journalSend(line: 1, token: Fixture.token(1), apnsID: UUID().uuidString.lowercased(), attempt: 1)
        output.flushJournal()
        #expect(output.journalFailure == "no space left on the device")
        #expect(output.failure == output.journalFailure)
        output.close()
    }

    @Test func aRunThatFailsBeforeSendingLeavesNoFilesAndAnotherMayStart() throws {
        let folder = Fixture.Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Fixture.header(), results: results, resume: nil)
        run.abandon()
        #expect(!FileManager.default.fileExists(atPath: results), "a header alone is not a run")
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"))
        let again = try BulkRun.open(header: Fixture.header(), results: results, resume: nil)
        again.release()
    }

    @Test func abandoningARunWithResultsKeepsThem() throws {
        let folder = Fixture.Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Fixture.header(), results: results, resume: nil)
        run.output.record(Fixture.result(line: 1, token: Fixture.token(1)))
        run.output.flushResults()
        run.abandon()
        #expect(FileManager.default.fileExists(atPath: results), "a result is never thrown away")
        #expect(FileManager.default.fileExists(atPath: results + ".journal"))
    }

    @Test func anInterruptedRunKeepsItsJournalAndRecordsWhyItStopped() throws {
        let folder = Fixture.Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Fixture.header(), results: results, resume: nil)
        run.output.record(Fixture.result(line: 1, token: Fixture.token(1)))
        var summary = BulkSummary()
        summary.results = 1
        summary.stoppedBy = .interrupted
        summary = run.conclude(summary, tokensRead: 2)
        #expect(summary.resultsWritten == 1)
        #expect(FileManager.default.fileExists(atPath: results + ".journal"))
        let state = try ResumeState.load(resultsPath: results)
        #expect(state.lastStop?.cause == "interrupted" && state.lastStop?.credential == "sha256:aa")
        #expect(state.finalCount == 1)
    }

    @Test func aResultsFileDeletedDuringTheRunStopsItAndKeepsTheJournal() throws {
        let folder = Fixture.Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Fixture.header(), results: results, resume: nil)
        run.output.record(Fixture.result(line: 1, token: Fixture.token(1)))
        try FileManager.default.removeItem(atPath: results)
        var summary = BulkSummary()
        summary.results = 1
        summary = run.conclude(summary, tokensRead: 1)
        #expect(summary.stoppedBy == .outputFailed && summary.resultsLost)
        #expect(summary.stopMessage?.contains("deleted or replaced") == true)
        #expect(FileManager.default.fileExists(atPath: results + ".journal"), "not complete: nothing cleaned up")
    }

    @Test func everyPartOfTheHeaderAResumeComparesIsNamedWhenItDiffers() throws {
        let folder = Fixture.Folder()
        let results = folder.file("r.jsonl")
        let run = try BulkRun.open(header: Fixture.header(), results: results, resume: nil)
        _ = run.conclude(BulkSummary(), tokensRead: 0)
        var changes: [(String, (inout BulkRunHeader) -> Void)] = []
        changes.append(("the payload", { $0.payloadSHA256 = "00" }))
        changes.append(("the push type (alert then, background now)", { $0.pushType = "background" }))
        changes.append(
            ("the gateway (127.0.0.1:2197 then, api.push.apple.com:443 now)", { $0.gateway = "api.push.apple.com:443" })
        )
        changes.append(("the collapse ID (none then, news now)", { $0.collapseID = "news" }))
        changes.append(("the priority (", { $0.priority = 5 }))
        // The expiration both ways: the number the header carries, and the time people read.
        changes.append(
            ("the expiration (none then, 1893456000 (2030-01-01T00:00:00Z) now", { $0.expiration = 1_893_456_000 })
        )
        for (words, change) in changes {
            var header = Fixture.header()
            change(&header)
            let error = #expect(throws: BulkRunError.self, "a run with another \(words) was resumed") {
                try BulkRun.open(header: header, results: nil, resume: results)
            }
            #expect(error?.code == .runMismatch && error?.failure == .invalidRequest)
            #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
            #expect(error?.path == results)
        }
    }

    @Test func aResumeWithAnotherTokenFileIsToldSo() throws {
        let folder = Fixture.Folder()
        let first = folder.file("tokens-1.txt")
        let second = folder.file("tokens-2.txt")
        try (Fixture.token(1) + "\n" + Fixture.token(2) + "\n").write(toFile: first, atomically: true, encoding: .utf8)
        try (Fixture.token(1) + "\n").write(toFile: second, atomically: true, encoding: .utf8)
        let fingerprint = try #require(BulkRunHeader.fingerprint(ofTokenFile: first))
        #expect(fingerprint.hasPrefix("130:"))
        #expect(BulkRunHeader.fingerprint(ofTokenFile: "-") == nil)
        #expect(BulkRunHeader.fingerprint(ofTokenFile: "/dev/zero") == nil)
        let results = folder.file("r.jsonl")
        var header = Fixture.header()
        header.tokensFingerprint = fingerprint
        _ = try BulkRun.open(header: header, results: results, resume: nil).conclude(BulkSummary(), tokensRead: 0)

        // Another file is resumed (results match by token) and the run says it changed.
        var other = header
        other.tokensFingerprint = BulkRunHeader.fingerprint(ofTokenFile: second)
        let changed = try BulkRun.open(header: other, results: nil, resume: results)
        #expect(changed.tokenFileChanged != nil)
        _ = changed.conclude(BulkSummary(), tokensRead: 0)
        // The same file, moved, is the same run, and nothing is said.
        let moved = folder.file("moved.txt")
        try FileManager.default.copyItem(atPath: first, toPath: moved)
        var same = header
        same.tokensFingerprint = BulkRunHeader.fingerprint(ofTokenFile: moved)
        let resumed = try BulkRun.open(header: same, results: nil, resume: results)
        #expect(resumed.tokenFileChanged == nil)
        _ = resumed.conclude(BulkSummary(), tokensRead: 0)
    }

    @Test func aFileWithoutARunHeaderIsNotResumed() throws {
        let folder = Fixture.Folder()
        let results = folder.file("r.jsonl")
        try Fixture.result(line: 1, token: Fixture.token(1)).jsonLine.write(
            toFile: results,
            atomically: true,
            encoding: .utf8
        )
        let error = #expect(throws: BulkRunError.self, "a file without a header was resumed") {
            try BulkRun.open(header: Fixture.header(), results: nil, resume: results)
        }
        #expect(error?.code == .notAResultsFile)
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"), "nothing made for a refused resume")
    }
}
