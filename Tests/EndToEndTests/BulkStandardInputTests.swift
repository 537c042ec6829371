import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Tokens on standard input: a run stopped by Ctrl-C on a real terminal (tmux) prints a resume
/// command that pipes the same input, and running it as printed finishes the run; a resume fed
/// nothing is an error that keeps the journal; a terminal is never read for tokens.
@Suite(.serialized)
struct BulkStandardInputTests {
    /// A tmux session running `script` (wide, so that nothing wraps), killed at the end.
    final class Terminal {
        let session = "apnsctl-stdin-\(UUID().uuidString.prefix(8))"
        init(script: String, folder: TemporaryFolder) throws {
            // As in the progress bar's test: through the shell, with signals unblocked.
            let launcher = folder.path("launch.py")
            try """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.execvp("tmux", ["tmux", "new-session", "-d", "-s", sys.argv[1], "-x", "1000", "-y", "50", "bash " + sys.argv[2]])
            """.write(toFile: launcher, atomically: true, encoding: .utf8)
            let status = system("python3 '\(launcher)' \(session) '\(script)' </dev/null >/dev/null 2>&1")
            try #require(status == 0, "tmux could not start a session")
        }
        func screen() throws -> String {
            try CLI.runProgram("tmux", ["capture-pane", "-p", "-J", "-t", session], timeout: 10).stdout
        }
        func press(_ key: String) throws { _ = try CLI.runProgram("tmux", ["send-keys", "-t", session, key]) }
        /// Waits until the screen shows `text` (the bound only ends a hung test).
        func wait(for text: String) throws -> String {
            var screen = ""
            try waitUntil {
                screen = try self.screen()
                return screen.contains(text)
            }
            return screen
        }
        deinit { _ = try? CLI.runProgram("tmux", ["kill-session", "-t", session]) }
    }

    static func quoted(_ words: [String]) -> String { words.map { "'\($0)'" }.joined(separator: " ") }

    @Test func ctrlCOnAPipeAndThePrintedCommandRunAsPrintedSendEachTokenOnce() throws {
        let (pki, gateway, _) = try BulkSendTests().gateway(["--latency-ms", "20", "--max-concurrent-streams", "10"])
        let folder = try TemporaryFolder()
        // More than a pipe's buffer, so that the writer is still there when apnsctl looks.
        let (tokens, _, _) = try BulkSendTests.makeTokens(5_000, seed: 51, in: folder)
        let send = Self.quoted(
            [CLI.throughputBinary, "send", pki.identity("sandbox"), "--environment", "sandbox", "--alert", "bulk"]
                + ["--tokens", "-", "--password-env", "MINT"] + gateway.connection
        )
        let script = folder.path("run.sh")
        try """
        cd '\(folder.path(""))'
        export MINT='\(GatewayCommandTests.password)'
        cat tokens.txt | \(send) --results s.jsonl
        echo "EXIT $?"
        sleep 60
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let terminal = try Terminal(script: script, folder: folder)
        BulkSendTests.waitForResults(folder.path("s.jsonl"), atLeast: 500)
        try terminal.press("C-c")
        let screen = try terminal.wait(for: "EXIT ")
        #expect(screen.contains("EXIT 130"), "\(screen)")
        let printed = try #require(BulkSendTests.resumeCommand(in: screen), "no resume command: \(screen)")
        #expect(printed.hasPrefix("cat tokens.txt | "), "the command pipes the same input: \(printed)")
        let before = try BulkStopAndResumeTests.results(folder.path("s.jsonl")).count
        #expect(before < tokens.count)

        let resumed = try BulkSendTests.runInShell(printed, in: folder, timeout: 300)
        #expect(resumed.status == 0, "exit \(resumed.status): \(resumed.stderr)")
        let results = try BulkStopAndResumeTests.results(folder.path("s.jsonl"))
        try BulkOneRunTests.expectEachTokenOnce(tokens, results: results, gateway: gateway)
        #expect(try gateway.deliveries().count == tokens.count, "every token exactly once")
    }

    @Test func aResumeFedNothingFailsAndKeepsTheJournal() throws {
        let bulk = try BulkSetting(
            gateway: ["--latency-ms", "20", "--max-concurrent-streams", "10"],
            tokens: 3_000,
            seed: 52
        )
        let (pki, gateway, resultsFile) = (bulk.pki, bulk.gateway, bulk.resultsFile)
        try bulk.killMidRun(after: 200)
        let journal = try String(contentsOfFile: resultsFile + ".journal", encoding: .utf8)
        let sent = try gateway.deliveries().count

        let empty = try BulkSendTests.run(
            BulkOneRunTests.arguments(pki, gateway, tokens: "-") + ["--resume", resultsFile],
            stdin: ""
        )
        #expect(empty.status == 2, "exit \(empty.status): \(empty.stderr)")
        #expect(empty.stderr.contains("No tokens were read") && !empty.stderr.contains("✓"), "\(empty.stderr)")
        let kept = try String(contentsOfFile: resultsFile + ".journal", encoding: .utf8)
        #expect(kept.hasPrefix(journal.prefix(journal.utf8.count / 2)), "the journal is kept")
        #expect(try gateway.deliveries().count == sent, "nothing was sent")
    }

    @Test func aTerminalIsNeverReadForTokens() throws {
        let pki = try BulkSendTests.pki.get()
        let folder = try TemporaryFolder()
        let script = folder.path("tty.sh")
        try """
        export MINT='\(GatewayCommandTests.password)'
        \(Self.quoted([CLI.binary, "send", pki.identity("sandbox"), "--alert", "x", "--tokens", "-", "--json", "--password-env", "MINT", "--gateway", "127.0.0.1:1"]))
        echo "EXIT $?"
        sleep 60
        """.write(toFile: script, atomically: true, encoding: .utf8)
        let terminal = try Terminal(script: script, folder: folder)
        let screen = try terminal.wait(for: "EXIT ")
        #expect(screen.contains("EXIT 64"), "\(screen)")
        #expect(screen.contains("Standard input is a terminal"), "\(screen)")
    }

    @Test func jsonOnStandardOutputWarnsBeforeSendingThatItCannotBeResumed() throws {
        let run = try BulkSetting(tokens: 20, seed: 53).run(["--json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("cannot be resumed"), "\(run.stderr)")
    }
}
