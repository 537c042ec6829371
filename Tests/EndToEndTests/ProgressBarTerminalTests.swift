import Foundation
import Glibc
import TestSupport
import Testing

/// The progress bar on a real terminal (tmux), 40 columns wide: it never wraps, so each redraw
/// erases the last, and nothing of it is left once the summary is printed.
struct ProgressBarTerminalTests {
    @Test func theProgressBarFitsFortyColumnsAndLeavesNothingBehind() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox", ["--latency-ms", "20", "--max-concurrent-streams", "10"])
        let folder = pki.folder
        // 3,000 distinct tokens (a token listed twice is sent once, which would change the count).
        let tokens = (0..<3_000).map { String(format: "%064x", $0 &* 7_919 &+ 1) }
        try tokens.joined(separator: "\n").write(toFile: folder.path("tokens.txt"), atomically: true, encoding: .utf8)
        let command =
            ([
                CLI.binary, "send", pki.identity("sandbox"), "--tokens", folder.path("tokens.txt"),
                "--results", folder.path("results.jsonl"), "--alert", "hi", "--password-env", "MINT",
            ]
            + gateway.connection).map { "'\($0)'" }.joined(separator: " ")
        let script = folder.path("run.sh")
        try "export MINT='\(GatewayCommandTests.password)'\n\(command)\necho \"EXIT $?\"\nsleep 30\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        let session = "apnsctl-progress-\(UUID().uuidString.prefix(8))"
        // The tmux server lives on after new-session returns. It is started through the shell
        // (Foundation's Process takes its descendants down with it) and with the test runner's
        // blocked signals unblocked (tmux's event loop depends on them).
        let launcher = folder.path("launch.py")
        try """
        import os, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execvp("tmux", ["tmux", "new-session", "-d", "-s", sys.argv[1], "-x", "40", "-y", "30", "bash " + sys.argv[2]])
        """.write(toFile: launcher, atomically: true, encoding: .utf8)
        let status = system("python3 '\(launcher)' \(session) '\(script)' </dev/null >/dev/null 2>&1")
        try #require(status == 0, "tmux could not start a session")
        defer { _ = try? CLI.runProgram("tmux", ["kill-session", "-t", session]) }

        var screen = ""
        var sawBar = false
        try waitUntil {
            screen = try CLI.runProgram("tmux", ["capture-pane", "-p", "-t", session], timeout: 10).stdout
            if screen.contains("/3,000") && screen.contains("▕") { sawBar = true }
            return screen.contains("EXIT ")
        }
        #expect(screen.contains("EXIT 0"), "\(screen)")
        #expect(sawBar, "the bar was drawn while the run went on")
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count <= 40 })
        // Nothing of the bar is left: no remnant of a wrapped or late redraw.
        #expect(!screen.contains("/3,000") && !screen.contains("▕") && !screen.contains("ETA"), "\(screen)")
        #expect(screen.contains("3,000 accepted"))
    }
}
