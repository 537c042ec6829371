import Foundation

/// The `git` command line, run in the store's folder: users' ssh configuration, credential
/// helpers and `GIT_SSH_COMMAND` work as they do for every other repository.
struct Git {
    var directory: String
    var environment: [String: String] = ProcessInfo.processInfo.environment

    func executable() throws -> String {
        guard let path = Subprocess.locate("git", environment: environment) else {
            throw CredentialError(
                .teamError,
                path: nil,
                "The git program is not installed; a team store is a git repository.",
                hint: "Install git (Debian and Ubuntu: apt-get install git)."
            )
        }
        return path
    }

    /// Runs git; never asks on a terminal (a missing credential fails instead of hanging).
    @discardableResult
    func run(_ arguments: [String], in folder: String? = nil) throws -> Subprocess.Result {
        var environment = self.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["LC_ALL"] = "C"
        // -C rather than a working directory of the child: posix_spawn cannot change it portably.
        return try Subprocess(
            executable: try executable(),
            arguments: ["-C", folder ?? directory] + arguments,
            environment: environment
        ).run()
    }

    /// Runs git and throws, with git's own words, when it fails.
    @discardableResult
    func must(_ arguments: [String], what: String, in folder: String? = nil) throws -> String {
        let result = try run(arguments, in: folder)
        guard result.succeeded else {
            throw CredentialError(
                .teamError,
                path: folder ?? directory,
                "git could not \(what): \(result.stderr.trimmed.split(separator: "\n").suffix(3).joined(separator: " "))",
                hint: nil
            )
        }
        return result.output
    }

    func config(_ key: String) -> String? {
        guard let result = try? run(["config", "--get", key]), result.succeeded else { return nil }
        let value = result.output.trimmed
        return value.isEmpty ? nil : value
    }

    var branch: String {
        (try? run(["symbolic-ref", "--short", "HEAD"]).output.trimmed).flatMap { $0.isEmpty ? nil : $0 } ?? "main"
    }

    var remoteURL: String? { config("remote.origin.url") }

    func hasChanges() throws -> Bool {
        !(try must(["status", "--porcelain", "--untracked-files=all"], what: "read the working tree")).trimmed.isEmpty
    }

    /// Commits everything in the working tree with `message`; false when there was nothing to commit.
    @discardableResult
    func commitAll(_ message: String) throws -> Bool {
        try must(["add", "--all", "."], what: "stage the store's files")
        guard try hasChanges() || !(try run(["diff", "--cached", "--quiet"])).succeeded else { return false }
        try must(["commit", "--quiet", "--no-verify", "-m", message], what: "commit the change")
        return true
    }

    /// Pushes the branch, never forced. Returns git's complaint when it could not.
    func push() throws -> String? {
        let result = try run(["push", "--quiet", "origin", "HEAD:refs/heads/\(branch)"])
        return result.succeeded ? nil : result.stderr.trimmed
    }

    func revision(_ name: String) -> String? {
        guard let result = try? run(["rev-parse", "--verify", "--quiet", "\(name)^{commit}"]), result.succeeded else {
            return nil
        }
        return result.output.trimmed
    }

    /// Commits on each side that the other has not: (ahead, behind).
    func aheadBehind(upstream: String) throws -> (ahead: Int, behind: Int) {
        guard revision(upstream) != nil else {
            let ahead = Int((try? must(["rev-list", "--count", "HEAD"], what: "count commits"))?.trimmed ?? "") ?? 0
            return (ahead, 0)
        }
        let counts = try must(
            ["rev-list", "--left-right", "--count", "HEAD...\(upstream)"],
            what: "compare with the remote"
        )
        .split(whereSeparator: \.isWhitespace)
        return (Int(counts.first ?? "") ?? 0, Int(counts.dropFirst().first ?? "") ?? 0)
    }

    /// A file's contents at a revision, or nil when it has none.
    func show(_ revision: String, _ path: String) -> Data? {
        guard let result = try? run(["show", "\(revision):\(path)"]), result.succeeded else { return nil }
        return Data(result.stdout)
    }
}
