import Foundation
import PushCore
import Testing

/// The one error model: a typed code, a subject, a failure kind, one equality rule and one JSON shape.
struct ErrorModelTests {
    @Test func errorsWithTheSameCodeAndSubjectAreEqualWhateverTheirWords() {
        let one = BulkRunError(.resultsExist, path: "sent.jsonl", "The results file exists.", hint: "Choose another.")
        let reworded = BulkRunError(.resultsExist, path: "sent.jsonl", "sent.jsonl is there already.")
        #expect(one == reworded)
        #expect(one != BulkRunError(.resultsExist, path: "other.jsonl", "The results file exists."))
        #expect(one != BulkRunError(.resultsLocked, path: "sent.jsonl", "The results file exists."))
        #expect(PushCoreError(.invalidTime, "one") == PushCoreError(.invalidTime, "two", hint: "three"))
        #expect(PushCoreError(.invalidTime, "one") != PushCoreError(.invalidChannel, "one"))
    }

    @Test func aCodeIsItsStringAndEncodesAsOne() throws {
        #expect(ErrorCode.invalidTeamID.rawValue == "invalid_team_id")
        #expect(ErrorCode.writeFailed.name == "write_failed")
        #expect(PushCoreError.Code.runMismatch == BulkRunError.Code.runMismatch)
        let data = try JSONEncoder().encode([ErrorCode.runMismatch])
        #expect(String(decoding: data, as: UTF8.self) == #"["run_mismatch"]"#)
        #expect(try JSONDecoder().decode([ErrorCode].self, from: data) == [.runMismatch])
    }

    @Test func theReportedShapeCarriesTheFileBeforeTheMessage() throws {
        let error = BulkRunError(.resultsUnreadable, path: "sent.jsonl", "It cannot be read.", hint: "Check it.")
        #expect(error.subject == .file("sent.jsonl"))
        #expect(
            error.reported
                == ReportedError(
                    code: "results_unreadable",
                    message: "sent.jsonl: It cannot be read.",
                    hint: "Check it."
                )
        )
        let json = try JSONSerialization.jsonObject(
            with: JSONEncoder().encode(PushCoreError(.invalidKey, "No.").reported)
        )
        #expect((json as? [String: String]) == ["code": "invalid_key", "message": "No."])
    }

    @Test func theFailureKindSaysWhichExitStatusAnErrorCallsFor() {
        #expect(PushCoreError(.invalidTime, "passed").failure == .invalidRequest)
        #expect(PushCoreError(.invalidDeviceToken, "odd").failure == .couldNotCheck)
        #expect(BulkRunError(.runMismatch, path: nil, "another run").failure == .invalidRequest)
        #expect(BulkRunError(.writeFailed, path: nil, "disk full").failure == .couldNotCheck)
    }

    /// Any conforming type gets the same rule: written once in the protocol, not per type.
    @Test func aNewConformingTypeGetsTheSameRule() {
        struct Custom: ReportableError {
            var code: ErrorCode
            var message: String
            var hint: String? { nil }
            var subject: ErrorSubject?
        }
        let a = Custom(code: .failed, message: "a", subject: .server("api.push.apple.com:443"))
        #expect(a == Custom(code: .failed, message: "b", subject: .server("api.push.apple.com:443")))
        #expect(a != Custom(code: .failed, message: "a", subject: .server("api.sandbox.push.apple.com:443")))
        #expect(a.failure == .couldNotCheck)
        #expect(a.statement == "a")
    }
}
