import Foundation
import PushCore
import Testing

/// The factories of ``PushCoreError``: code, hint and failure kind survive into the JSON shape;
/// where the error was made is recorded but never compared or reported.
struct PushCoreErrorFactoryTests {
    @Test func aFactoryKeepsCodeHintAndWhereItWasMade() throws {
        let line: UInt = #line + 1
        let error = PushCoreError(.invalidDeviceToken, "The device token is not hexadecimal.", hint: "Copy it again.")
        #expect(error.code == .invalidDeviceToken)
        #expect(error.file == #fileID)
        #expect(error.line == line)
        #expect(
            error.reported
                == ReportedError(
                    code: "invalid_device_token",
                    message: "The device token is not hexadecimal.",
                    hint: "Copy it again."
                )
        )
        let data = try JSONEncoder().encode(error.reported)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(Set(json.keys) == ["code", "message", "hint"])
        #expect(error.debugDescription.hasSuffix("(\(#fileID):\(line))"))
        #expect(!error.description.contains(#fileID))
    }

    @Test func theFailureKindFollowsTheCode() {
        #expect(PushCoreError(.invalidTime, "The time has passed.").failure == .invalidRequest)
        #expect(PushCoreError(.invalidChannel, "Not base64.").failure == .invalidRequest)
        #expect(PushCoreError(.invalidNotification, "Too large.").failure == .couldNotCheck)
        #expect(PushCoreError(.writeFailed, "Disk full.").code == .writeFailed)
    }

    @Test func equalityIgnoresWhereAndWords() {
        let here = PushCoreError(.invalidKeyID, "Not ten characters.")
        let there = PushCoreError(.invalidKeyID, "Other words.", file: "Other.swift", line: 1)
        #expect(here == there)
        #expect(here != PushCoreError(.invalidTeamID, "Not ten characters."))
    }
}
