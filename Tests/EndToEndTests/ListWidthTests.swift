import Foundation
import TestSupport
import Testing

/// `list` of a real team's store (11 credentials, aliases of up to 58 characters) on real
/// terminals of 120, 80, 60 and 40 columns: no line is wider than the terminal, and at 80 and
/// wider every alias and every date stands whole on its line.
struct ListWidthTests {
    @Test func listFitsEveryTerminalWidthAndKeepsAliasesAndDatesWhole() throws {
        let team = try TeamStore()
        let listed = try team.run(["list", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let credentials = try #require(report["credentials"] as? [[String: Any]])
        let dates = credentials.compactMap { ($0["not_after"] as? String).map { String($0.prefix(10)) } }
        #expect(dates.count == 9, "each of the nine certificates has an expiry date: \(dates)")

        for width in [120, 80, 60, 40] {
            let screen = try Self.screen(of: ["list", "--store", team.store.path], width: width, in: team.folder)
            #expect(screen.contains("EXIT 0"), "\(width) columns:\n\(screen)")
            let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
            for line in lines {
                #expect(line.count <= width, "\(width) columns, a line of \(line.count):\n\(line)")
            }
            if width >= 80 {
                for alias in TeamStore.aliases {
                    #expect(
                        lines.contains { $0.split(separator: " ").contains(Substring(alias)) },
                        "\(width) columns: \(alias) is not whole on any line:\n\(screen)"
                    )
                }
                for date in dates {
                    #expect(
                        lines.contains { $0.split(separator: " ").contains(Substring(date)) },
                        "\(date) at \(width)"
                    )
                }
            } else {
                // Narrower, an alias may be wrapped, but nothing of it is lost.
                let joined = screen.filter { !$0.isWhitespace }
                for alias in TeamStore.aliases { #expect(joined.contains(alias), "\(width) columns: \(alias)") }
            }
        }

        // Through a pipe nothing is shortened, whatever the terminal: every topic is there whole.
        let piped = try team.run(["list"])
        #expect(piped.stdout.contains(TeamStore.product + ", "), "\(piped.stdout)")
        #expect(!piped.stdout.contains("…") && !piped.stdout.contains(" more"))
    }

    /// What a tmux window of `width` columns shows after running apnsctl with `arguments`,
    /// lines wrapped by the terminal joined again (`capture-pane -J`).
    static func screen(of arguments: [String], width: Int, in folder: TemporaryFolder) throws -> String {
        let script = folder.path("list-\(width).sh")
        let command = ([CLI.binary] + arguments).map { "'\($0)'" }.joined(separator: " ")
        try "unset COLUMNS LINES\n\(command)\necho \"EXIT $?\"\nsleep 30\n".write(
            toFile: script,
            atomically: true,
            encoding: .utf8
        )
        let session = "apnsctl-list-\(width)-\(UUID().uuidString.prefix(8))"
        // Started through the shell with signals unblocked, as the progress bar's test explains.
        let launcher = folder.path("launch-list.py")
        try """
        import os, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execvp("tmux", ["tmux", "new-session", "-d", "-s", sys.argv[1], "-x", sys.argv[3], "-y", "200", "bash " + sys.argv[2]])
        """.write(toFile: launcher, atomically: true, encoding: .utf8)
        let status = system("python3 '\(launcher)' \(session) '\(script)' \(width) </dev/null >/dev/null 2>&1")
        try #require(status == 0, "tmux could not start a session")
        defer { _ = try? CLI.runProgram("tmux", ["kill-session", "-t", session]) }
        var screen = ""
        try waitUntil {
            screen = try CLI.runProgram("tmux", ["capture-pane", "-p", "-J", "-t", session], timeout: 10).stdout
            return screen.contains("EXIT ")
        }
        return screen
    }
}
