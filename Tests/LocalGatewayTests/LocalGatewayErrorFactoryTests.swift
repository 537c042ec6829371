import Foundation
import LocalGateway
import PushCore
import Testing

/// The factories of ``LocalGatewayError``: code, file and hint survive into the JSON shape; where
/// the error was made is recorded but never compared or reported.
struct LocalGatewayErrorFactoryTests {
    @Test func aFactoryKeepsCodePathHintAndWhereItWasMade() throws {
        let line: UInt = #line + 1
        let error = LocalGatewayError(.invalidRegistry, path: "devices.json", "Not JSON.", hint: "Fix the file.")
        #expect(error.code == .invalidRegistry)
        #expect(error.subject == .file("devices.json"))
        #expect(error.file == #fileID)
        #expect(error.line == line)
        #expect(
            error.reported
                == ReportedError(code: "invalid_registry", message: "devices.json: Not JSON.", hint: "Fix the file.")
        )
        #expect(error.debugDescription.hasSuffix("(\(#fileID):\(line))"))
    }

    @Test func equalityIgnoresWhereButNotTheFile() {
        let here = LocalGatewayError(.cannotListen, path: nil, "Address in use.")
        #expect(here == LocalGatewayError(.cannotListen, path: nil, "Other words.", file: "Other.swift", line: 2))
        #expect(here != LocalGatewayError(.cannotListen, path: "x", "Address in use."))
        #expect(LocalGatewayError(.invalidMintRequest, "No topic.").subject == nil)
    }
}
