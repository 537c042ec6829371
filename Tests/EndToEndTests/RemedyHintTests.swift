import Foundation
import TestSupport
import Testing

/// A remedy (what to do, as a value in the libraries) reaches a person as a command of the CLI
/// that works when pasted, and a program as the same words in `error.hint`.
@Suite(.needsSecretService)
struct RemedyHintTests {
    @Test func anEmptyStoresPreflightNamesTheImportThatFillsIt() throws {
        let store = try StoreCommandTests.Store()
        try FileManager.default.createDirectory(atPath: store.path, withIntermediateDirectories: true)

        let text = try store.run(["preflight", "--environment", "sandbox"]).exited(2)
        let printed = "Import one (`apnsctl import FILE --store \(store.path)`) or name credential files."
        #expect(text.stderr.contains("hint: \(printed)"), "\(text.stderr)")

        let object = try store.run(["preflight", "--environment", "sandbox", "--json"]).exited(2).json()
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == "alias_not_found")
        #expect(error["hint"] as? String == printed)

        // The command as printed, with its one placeholder filled in, stores the credential.
        let commands = HintsRunAsPrintedTests.commands(in: text.stderr)
        #expect(commands == ["apnsctl import FILE --store \(store.path)"])
        for command in commands {
            try HintsRunAsPrintedTests.expectSafeToPaste(command)
            let file = CLI.cert("pem/sandbox-bag-attributes.pem")
            try HintsRunAsPrintedTests.runAsPrinted(
                command.replacingOccurrences(of: "FILE", with: "'\(file)'")
            ).succeeded(context: "\(command)")
        }
        #expect(try store.listJSON().count == 1)
    }
}
