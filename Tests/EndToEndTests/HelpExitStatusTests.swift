import Foundation
import TestSupport
import Testing

/// Every command's help says which exit statuses it returns and shows examples. The commands are
/// the binary's own, as its parsed configuration lists them (`--experimental-dump-help`, every
/// subcommand's subcommands included), so that a command added later without them fails here.
struct HelpExitStatusTests {
    /// The statuses the project uses (README.md, "Exit codes").
    static let statuses: Set<Int> = [0, 1, 2, 64, 130]

    /// The "Exit status:" paragraph of a help text, its lines joined with spaces; nil when it has none.
    static func exitStatusParagraph(inHelp help: String) -> String? {
        var paragraph: [String] = []
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if paragraph.isEmpty {
                if text.hasPrefix("Exit status") { paragraph.append(text) }
            } else if text.isEmpty {
                break
            } else {
                paragraph.append(text)
            }
        }
        return paragraph.isEmpty ? nil : paragraph.joined(separator: " ")
    }

    /// The statuses a paragraph names, in its order: each number that opens a clause ("0 all good;
    /// 1 …; 64 usage error").
    static func statuses(inParagraph paragraph: String) -> [Int] {
        paragraph.matches(of: #/(?:: |; )(\d+) /#).compactMap { Int($0.1) }
    }

    @Test func theParagraphParserReadsTheOneLineStyle() {
        let help = """
            OVERVIEW: Something.

            Some text.

              Exit status: 0 done; 1 refused, nothing changed (a file
              that exists); 2 could not; 64 usage error.

              Examples:
                apnsctl something
            """
        let paragraph = Self.exitStatusParagraph(inHelp: help)
        #expect(paragraph?.hasSuffix("64 usage error.") == true, "\(paragraph ?? "none")")
        #expect(paragraph.map(Self.statuses(inParagraph:)) == [0, 1, 2, 64])
        #expect(Self.exitStatusParagraph(inHelp: "OVERVIEW: Something.\n\nExamples:\n  apnsctl x\n") == nil)
    }

    @Test func everyCommandsHelpStatesItsExitStatusesAndHasExamples() throws {
        let commands = try PackagingTests.commandPaths().map { Array($0.dropFirst()) }
        // apnsctl itself and the about 27 commands and subcommands.
        #expect(commands.count > 20, "\(commands)")
        #expect(commands.contains(["list"]) && commands.contains(["team", "status"]), "\(commands)")
        for command in commands {
            let name = (["apnsctl"] + command).joined(separator: " ")
            let help = try CLI.run(command.isEmpty ? ["--help"] : ["help"] + command)
            #expect(help.status == 0, "apnsctl help \(command.joined(separator: " ")): \(help.stderr)")
            guard let paragraph = Self.exitStatusParagraph(inHelp: help.stdout) else {
                Issue.record("\(name) --help has no \"Exit status:\" paragraph:\n\(help.stdout)")
                continue
            }
            let statuses = Self.statuses(inParagraph: paragraph)
            #expect(statuses.first == 0, "\(name): the statuses start with 0: \(paragraph)")
            #expect(statuses.contains(64), "\(name): every command has usage errors (64): \(paragraph)")
            #expect(statuses == statuses.sorted() && Set(statuses).count == statuses.count, "\(name): \(paragraph)")
            #expect(
                Set(statuses).isSubset(of: Self.statuses),
                "\(name): a status the project does not use: \(paragraph)"
            )
            guard !command.isEmpty else { continue }
            let examples = HelpExamplesTests.examples(inHelp: help.stdout)
            #expect(!examples.isEmpty, "\(name) --help has no Examples block:\n\(help.stdout)")
            // The examples close the help's text, after the exit statuses, in every command alike.
            let lines = help.stdout.split(separator: "\n").map(String.init)
            let statusLine = lines.firstIndex { $0.hasPrefix("Exit status") }
            let examplesLine = lines.firstIndex { $0.hasPrefix("Examples") }
            #expect((statusLine ?? 0) < (examplesLine ?? 0), "\(name): the exit statuses come after the examples")
        }
    }
}
