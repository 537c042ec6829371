import Foundation
import Testing

@testable import PushBulk

/// BulkRunError's factories: each gives its code, keeps its subject and hint as far as the JSON
/// shape the command line prints, says where it was made, and calls for the exit status the
/// command line has always given it.
struct BulkRunErrorTests {
    static func json(_ error: BulkRunError) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(error.reported))
        return try #require(object as? [String: String])
    }

    @Test func eachFactoryGivesItsCodeSubjectAndHint() throws {
        let cases: [(BulkRunError, String, String?, FailureKind)] = [
            (.resultsExist(path: "sent.jsonl"), "results_exist", "sent.jsonl", .problem),
            (.resultsLocked(path: "sent.jsonl", holder: "process 42"), "results_locked", "sent.jsonl", .couldNotCheck),
            (.resultsUnreadable(path: "sent.jsonl"), "results_unreadable", "sent.jsonl", .couldNotCheck),
            (
                .resultsUnreadable(path: "sent.jsonl", reason: "No such file or directory"), "results_unreadable",
                "sent.jsonl", .couldNotCheck
            ),
            (.noRunHeader(path: "sent.jsonl"), "not_a_results_file", "sent.jsonl", .invalidRequest),
            (.notAResultLine(path: "sent.jsonl", number: 3), "not_a_results_file", "sent.jsonl", .invalidRequest),
            (
                .runMismatch(path: "sent.jsonl", differences: ["the payload"], credentialDiffers: false),
                "run_mismatch", "sent.jsonl", .invalidRequest
            ),
            (.cannotOpenForWriting(path: "a/b.jsonl", reason: "denied"), "write_failed", "a/b.jsonl", .couldNotCheck),
            (.cannotRepair(path: "b.jsonl", reason: "disk full"), "write_failed", "b.jsonl", .couldNotCheck),
            (.terminalInput(), "terminal_input", nil, .invalidRequest),
            (.journalMissing(path: "sent.jsonl", inFlightBound: 2000), "journal_missing", "sent.jsonl", .problem),
            (.resultsCannotBeRead(path: "s.jsonl", reason: "denied"), "results_unreadable", "s.jsonl", .couldNotCheck),
            (.noRunHeaderToCompare(path: "s.jsonl"), "not_a_results_file", "s.jsonl", .invalidRequest),
            (
                .runsDiffer(path: "b.jsonl", first: "a.jsonl", differences: ["the payload"]), "runs_differ", "b.jsonl",
                .invalidRequest
            ),
        ]
        for (error, code, path, failure) in cases {
            #expect(error.code.description == code)
            #expect((error as any ReportableError).code.rawValue == code, "the shared code is the typed one's")
            #expect(error.subject == path.map(ErrorSubject.file))
            #expect(error.failure == failure, "\(code)")
            let json = try Self.json(error)
            #expect(json["code"] == code)
            #expect(json["message"] == (path.map { "\($0): " } ?? "") + error.message)
            #expect(json["hint"] == error.hint)
            #expect(error.hint != nil, "\(code) says what to do")
            #expect(error.file == "PushBulkTests/BulkRunErrorTests.swift")
        }
    }

    @Test func theMessagesSayWhatHappened() {
        #expect(
            BulkRunError.notAResultLine(path: "r", number: 7).message == "Line 7 is not a result line of a bulk run."
        )
        #expect(
            BulkRunError.resultsUnreadable(path: "r", reason: "Permission denied").message
                == "The results file cannot be opened (Permission denied)."
        )
        #expect(
            BulkRunError.runMismatch(path: "r", differences: ["the credential"], credentialDiffers: true).message
                == "This results file belongs to another run: the credential differs (another credential is accepted only after a run stopped because APNs refused its credential). Nothing was sent."
        )
        #expect(
            BulkRunError.runMismatch(path: "r", differences: ["the payload", "the topic"], credentialDiffers: false)
                .message == "This results file belongs to another run: the payload, the topic differ. Nothing was sent."
        )
    }

    @Test func filesOfDifferentRunsAreNamedWithWhatDiffers() {
        #expect(
            BulkRunError.runsDiffer(path: "b", first: "a", differences: ["the payload", "the topic (x then, y now)"])
                .message
                == "This results file belongs to another run than a: the payload, the topic (x then, y now) differ. Nothing was counted."
        )
    }

    @Test func theLineIsWhereTheFactoryWasCalled() {
        let line: UInt = #line + 1
        let error = BulkRunError.resultsExist(path: "sent.jsonl")
        #expect(error.line == line)
    }

    @Test func codesAreTheSharedCodes() {
        let error = BulkRunError.resultsLocked(path: "r", holder: "process 1")
        #expect(error.code == .resultsLocked)
        #expect(error.code != .resultsExist)
        // The shared ErrorCode a front end compares with, as JSON gives it.
        #expect((error as any ReportableError).code == ErrorCode("results_locked"))
    }

    @Test func twoErrorsAreEqualWithTheSameCodeAndSubject() {
        #expect(BulkRunError.resultsExist(path: "a") == BulkRunError.resultsExist(path: "a"))
        #expect(BulkRunError.resultsExist(path: "a") != BulkRunError.resultsExist(path: "b"))
        #expect(BulkRunError.resultsUnreadable(path: "a") != BulkRunError.resultsLocked(path: "a", holder: "x"))
    }
}

/// The result codes are a closed set whose strings are those results files have always held.
struct BulkResultCodeTests {
    @Test func theRawValuesAreTheResultsFilesStrings() {
        #expect(
            BulkResultCode.allCases.map(\.rawValue) == [
                "malformed_token", "outcome_unknown", "timeout", "not_processed", "unanswered_after_goaway",
                "stream_reset", "connection_closed",
            ]
        )
    }

    @Test func aResultLineCarriesTheCodeAsItsString() {
        let result = BulkResult(
            line: 3,
            token: "ab",
            attempts: 2,
            uncertain: true,
            error: .connectionClosed,
            message: "The connection closed.",
            uncertainBecause: .streamReset
        )
        #expect(
            result.jsonLine
                == #"{"line":3,"token":"ab","status":null,"reason":null,"apns_id":null,"attempts":2,"uncertain":true,"uncertain_because":"stream_reset","error":{"code":"connection_closed","message":"The connection closed."}}"#
                + "\n"
        )
        let malformed = BulkResult(line: 4, token: "zz", attempts: 0, error: .malformedToken, message: "odd")
        #expect(
            BulkResult.parseKey(Array(malformed.jsonLine.utf8.dropLast()))?.key == BulkResult.key(malformedText: "zz")
        )
    }
}
