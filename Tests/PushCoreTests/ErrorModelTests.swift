import Foundation
import PushCore
import Testing

/// The one error model: a typed code, a subject, a failure kind, one equality rule and one JSON shape.
struct ErrorModelTests {
    /// An error about a file, as the modules above PushCore declare theirs.
    struct FileError: ReportableError {
        var code: ErrorCode
        var path: String?
        var message: String
        var hint: String?
        init(_ code: ErrorCode, path: String?, _ message: String, hint: String? = nil) {
            self.code = code
            self.path = path
            self.message = message
            self.hint = hint
        }
        var subject: ErrorSubject? { path.map(ErrorSubject.file) }
    }

    @Test func errorsWithTheSameCodeAndSubjectAreEqualWhateverTheirWords() {
        let one = FileError(.writeFailed, path: "sent.jsonl", "The results file exists.", hint: "Choose another.")
        let reworded = FileError(.writeFailed, path: "sent.jsonl", "sent.jsonl is there already.")
        #expect(one == reworded)
        #expect(one != FileError(.writeFailed, path: "other.jsonl", "The results file exists."))
        #expect(one != FileError(.invalidNotification, path: "sent.jsonl", "The results file exists."))
        #expect(PushCoreError(.invalidTime, "one") == PushCoreError(.invalidTime, "two", hint: "three"))
        #expect(PushCoreError(.invalidTime, "one") != PushCoreError(.invalidChannel, "one"))
    }

    @Test func aCodeIsItsStringAndEncodesAsOne() throws {
        #expect(ErrorCode.invalidTeamID.rawValue == "invalid_team_id")
        #expect(ErrorCode.writeFailed.name == "write_failed")
        #expect(PushCoreError.Code.invalidTime == ErrorCode("invalid_time"))
        let data = try JSONEncoder().encode([ErrorCode.invalidTime])
        #expect(String(decoding: data, as: UTF8.self) == #"["invalid_time"]"#)
        #expect(try JSONDecoder().decode([ErrorCode].self, from: data) == [.invalidTime])
    }

    @Test func theReportedShapeCarriesTheFileBeforeTheMessage() throws {
        let error = FileError(.invalidNotification, path: "sent.jsonl", "It cannot be read.", hint: "Check it.")
        #expect(error.subject == .file("sent.jsonl"))
        #expect(
            error.reported
                == ReportedError(
                    code: "invalid_notification",
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
        #expect(FileError(.writeFailed, path: nil, "disk full").failure == .couldNotCheck)
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
