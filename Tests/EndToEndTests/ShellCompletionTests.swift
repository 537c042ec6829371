import Foundation
import Glibc
import TestSupport
import Testing

/// zsh and fish, interactive in a real terminal (tmux): a Tab after `apnsctl check ` offers the
/// store's aliases. Their completion systems only run in an interactive shell, so the test types
/// as a user would and reads the screen.
@Suite(.needsSecretService)
struct ShellCompletionTests {
    enum Shell: String, CaseIterable, CustomTestStringConvertible {
        case zsh, fish
        var testDescription: String { rawValue }
    }

    @Test(arguments: Shell.allCases)
    func tabOffersTheStoredAliases(_ shell: Shell) throws {
        let store = try StoreCommandTests.Store()
        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        #expect(try store.run(["import", key, "--team-id", "ABCDE12345", "--alias", "tab-key"]).status == 0)
        let folder = store.folder
        let generated = try CLI.run(["--generate-completion-script", shell.rawValue]).succeeded()
        let scriptFile = folder.path(shell == .zsh ? "_apnsctl" : "apnsctl.fish")
        try generated.stdout.write(toFile: scriptFile, atomically: true, encoding: .utf8)

        let binaryFolder = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        let start = shell == .zsh ? "zsh -f" : "fish --no-config"
        let load =
            shell == .zsh
            ? "fpath=('\(folder.url.path)' $fpath); autoload -U compinit; compinit -u"
            : "source '\(scriptFile)'"
        let runner = folder.path("shell.sh")
        try """
        cd '\(folder.url.path)'
        export APNSCTL_STORE='\(store.path)' PATH='\(binaryFolder)':"$PATH"
        exec \(start)
        """.write(toFile: runner, atomically: true, encoding: .utf8)
        let session = "apnsctl-\(shell.rawValue)-\(UUID().uuidString.prefix(8))"
        // Started through the shell with the test runner's blocked signals unblocked, as in
        // ProgressBarTerminalTests: tmux's server lives on after new-session returns.
        let launcher = folder.path("launch.py")
        try """
        import os, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execvp("tmux", ["tmux", "new-session", "-d", "-s", sys.argv[1], "-x", "100", "-y", "20", "sh " + sys.argv[2]])
        """.write(toFile: launcher, atomically: true, encoding: .utf8)
        try #require(system("python3 '\(launcher)' \(session) '\(runner)' </dev/null >/dev/null 2>&1") == 0)
        defer { _ = try? CLI.runProgram("tmux", ["kill-session", "-t", session]) }

        func screen() throws -> String {
            try CLI.runProgram("tmux", ["capture-pane", "-p", "-t", session], timeout: 10).stdout
        }
        func send(_ keys: [String]) throws {
            _ = try CLI.runProgram("tmux", ["send-keys", "-t", session] + keys, timeout: 10)
        }
        /// Reads the screen until `condition` holds on it; the bound only ends a hung test.
        func awaitScreen(_ condition: (String) -> Bool) throws -> String {
            var text = ""
            try waitUntil {
                text = try screen()
                return condition(text)
            }
            return text
        }
        func lines(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        // Type only once the shell shows its prompt: a shell still starting may drop what is typed.
        let prompt = try awaitScreen { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        #expect(!prompt.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(shell.rawValue) showed no prompt")
        // The marker is printed (quotes gone) once the completion script is loaded; then a new
        // prompt follows it.
        try send([load + "; echo completion-'loaded'", "Enter"])
        let loaded = try awaitScreen { text in
            let shown = lines(text)
            guard let marker = shown.firstIndex(of: "completion-loaded") else { return false }
            return shown[(marker + 1)...].contains { !$0.isEmpty }
        }
        #expect(lines(loaded).contains("completion-loaded"), "\(shell.rawValue) did not load the script:\n\(loaded)")
        try send(["apnsctl check ", "Tab"])
        let text = try awaitScreen { $0.contains("tab-key") }
        #expect(text.contains("tab-key"), "\(shell.rawValue) offered no alias:\n\(text)")
    }
}
