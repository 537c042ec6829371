import Foundation
import TestSupport
import Testing

@testable import PushStore

/// The commands messages print are pasted into a shell: every word must come back as the same
/// bytes, and nothing in one may act on the terminal that shows it.
struct ShellWordsTests {
    /// What bash reads `quoted` as, byte for byte.
    static func readBack(_ quoted: String) throws -> [UInt8] {
        let result = try CLI.runProgram("bash", ["-c", "printf '%s' " + quoted + " | od -An -tx1 -v"])
        return result.stdout.split(whereSeparator: \.isWhitespace).compactMap { UInt8($0, radix: 16) }
    }

    @Test(arguments: [
        "results.jsonl", "my results.jsonl", "it's.jsonl", "res\u{202E}lnosj.txt", "line\nbreak", "tab\there",
        "esc\u{1B}[31mred", "back\\slash'\u{2066}", "c1\u{85}next", "",
    ])
    func everyWordReadsBackAsItsBytes(_ word: String) throws {
        let quoted = ShellWords.quote(word)
        #expect(try Self.readBack(quoted) == Array(word.utf8), "\(quoted)")
        // Shown on a terminal, the quoted word holds nothing Untrusted.display would rewrite.
        #expect(Untrusted.display(quoted) == quoted, "\(quoted)")
    }

    @Test func aBidirectionalOverrideIsWrittenAsAnEscape() {
        #expect(ShellWords.quote("res\u{202E}lnosj.txt") == "$'res\\u202elnosj.txt'")
        #expect(ShellWords.quote("plain-name.jsonl") == "plain-name.jsonl")
        #expect(ShellWords.quote("two words") == "'two words'")
    }
}
