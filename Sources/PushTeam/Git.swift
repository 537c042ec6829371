import CredentialFormats
import Foundation
import PushStore

/// The `git` command line, run in the store's folder: users' ssh configuration, credential
/// helpers and `GIT_SSH_COMMAND` work as they do for every other repository.
struct Git {
    var directory: String
    var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Opens a new bundle of the store with its stored password and checks that it is the one
    /// the index names (see ``TeamStaging``); nil where no member's identity is at hand.
    var checkBundle: (@Sendable (StoredCredential) async throws -> Void)? = nil

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
    func run(_ arguments: [String], in folder: String? = nil) async throws -> Subprocess.Result {
        try await subprocess(arguments, in: folder).run()
    }

    /// Runs git on this thread, for work that runs on ``BlockingPool`` already (the member-list
    /// walk asks git about commits while it decides).
    func runWaiting(_ arguments: [String], in folder: String? = nil) throws -> Subprocess.Result {
        try subprocess(arguments, in: folder).runWaiting()
    }

    private func subprocess(_ arguments: [String], in folder: String?) throws -> Subprocess {
        var environment = self.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["LC_ALL"] = "C"
        // -C rather than a working directory of the child: posix_spawn cannot change it portably.
        return Subprocess(
            executable: try executable(),
            arguments: ["-C", folder ?? directory] + arguments,
            environment: environment,
            program: .git
        )
    }

    /// Runs git and throws, with git's own words, when it fails.
    @discardableResult
    func must(_ arguments: [String], what: String, in folder: String? = nil) async throws -> String {
        let result = try await run(arguments, in: folder)
        guard result.succeeded else {
            throw CredentialError(
                .teamError,
                path: folder ?? directory,
                "git could not \(what): \(Self.words(result.stderr))",
                hint: nil
            )
        }
        return result.output
    }

    /// git's own words for a failure (its last lines), with a URL's password and anything that
    /// looks like an age identity taken out: what reaches the person, never a secret.
    static func words(_ stderr: String, lines: Int = 3) -> String {
        // git's closing advice says nothing of the cause ("Please make sure you have the
        // correct access rights and the repository exists."); the cause is the line before.
        let boilerplate = [
            "Please make sure you have the correct access rights", "and the repository exists.",
            "fatal: Could not read from remote repository.",
        ]
        let meaningful = stderr.trimmed.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { line in !line.isEmpty && !boilerplate.contains { line.hasPrefix($0) } }
        let kept = meaningful.prefix(lines).joined(separator: " ")
        return scrub(kept.isEmpty ? stderr.trimmed : kept)
    }

    static func scrub(_ text: String) -> String {
        var result = text
        // scheme://user:password@host → scheme://user:***@host
        if let expression = try? NSRegularExpression(pattern: "([a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s:@]*):[^/\\s@]*@") {
            result = expression.stringByReplacingMatches(
                in: result,
                range: NSRange(result.startIndex..., in: result),
                withTemplate: "$1:***@"
            )
        }
        if let expression = try? NSRegularExpression(pattern: "AGE-SECRET-KEY-1[0-9A-Z]+") {
            result = expression.stringByReplacingMatches(
                in: result,
                range: NSRange(result.startIndex..., in: result),
                withTemplate: "AGE-SECRET-KEY-1…"
            )
        }
        return result
    }

    func config(_ key: String) async -> String? {
        guard let result = try? await run(["config", "--get", key]), result.succeeded else { return nil }
        let value = result.output.trimmed
        return value.isEmpty ? nil : value
    }

    var branch: String {
        get async {
            let name = try? await run(["symbolic-ref", "--short", "HEAD"]).output.trimmed
            return name.flatMap { $0.isEmpty ? nil : $0 } ?? "main"
        }
    }

    var remoteURL: String? {
        get async { await config("remote.origin.url") }
    }

    func hasChanges() async throws -> Bool {
        !(try await must(["status", "--porcelain", "--untracked-files=all"], what: "read the working tree")).trimmed
            .isEmpty
    }

    /// Commits the store's own changes with `message`, staged by name (``TeamStaging``: anything
    /// else in the folder stops it, named); false when there was nothing to commit.
    @discardableResult
    func commitAll(_ message: String) async throws -> Bool {
        try await TeamStaging(git: self).stage()
        guard !(try await run(["diff", "--cached", "--quiet"])).succeeded else { return false }
        try await commit(message, what: Self.committingAChange)
        return true
    }

    static let committingAChange = "commit the change"

    /// Commits what is staged. A clone where git does not know who commits (a plain clone on a
    /// machine with no `user.name` or `user.email`) gets git's whole reason and the commands to
    /// tell it, for this clone; the change stays in the folder for the next commit to take.
    func commit(_ message: String, what: String) async throws {
        let result = try await run(["commit", "--quiet", "--no-verify", "-m", message])
        guard !result.succeeded else { return }
        let said = result.stderr
        let identityUnknown = ["Please tell me who you are", "unable to auto-detect email address", "empty ident name"]
        guard identityUnknown.contains(where: { said.contains($0) })
        else {
            throw CredentialError(.teamError, path: directory, "git could not \(what): \(Self.words(said))", hint: nil)
        }
        let whole = Self.scrub(
            said.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                .joined(separator: " ")
        )
        let clone = ShellWords.quote(directory)
        throw CredentialError(
            .teamError,
            path: directory,
            "git could not \(what): it does not know who is committing in this clone (git: \(whole))."
                + (what == Self.committingAChange
                    ? " The change is in the store's folder, and no commit holds it yet." : ""),
            hint:
                "Tell git who commits here: git -C \(clone) config user.name \"Your Name\" && "
                + "git -C \(clone) config user.email \"you@example.com\" (with your own name and address); "
                + "a sync then commits and pushes the change."
        )
    }

    /// Pushes `revision` (HEAD unless named) to the branch, never forced, and says what became
    /// of it (``PushOutcome``).
    func push(_ revision: String = "HEAD") async throws -> PushOutcome {
        let result = try await run([
            "push", "--porcelain", "--quiet", "origin", "\(revision):refs/heads/\(await branch)",
        ])
        if result.succeeded { return .pushed }
        // git's machine-readable status line, `!<TAB>FROM:TO<TAB>[rejected] (REASON)`: the
        // remote's branch holds commits this clone has not (not a hook's "[remote rejected]").
        let rejected = result.output.split(separator: "\n").contains { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            return fields.count >= 3 && fields[0] == "!" && fields[2].hasPrefix("[rejected]")
        }
        return rejected ? .remoteAhead : .failed(Self.scrub(result.stderr.trimmed))
    }

    /// What became of a push, from git's porcelain status, never from its words.
    enum PushOutcome: Equatable {
        case pushed
        /// The remote's branch moved on: fetch, take it in, and push again.
        case remoteAhead
        /// Any other failure, in git's words (scrubbed), to show.
        case failed(String)
    }

    func revision(_ name: String) async -> String? {
        guard let result = try? await run(["rev-parse", "--verify", "--quiet", "\(name)^{commit}"]), result.succeeded
        else {
            return nil
        }
        return result.output.trimmed
    }

    /// Commits on each side that the other has not: (ahead, behind).
    func aheadBehind(upstream: String) async throws -> (ahead: Int, behind: Int) {
        guard await revision(upstream) != nil else {
            let ahead =
                Int((try? await must(["rev-list", "--count", "HEAD"], what: "count commits"))?.trimmed ?? "") ?? 0
            return (ahead, 0)
        }
        let counts = try await must(
            ["rev-list", "--left-right", "--count", "HEAD...\(upstream)"],
            what: "compare with the remote"
        )
        .split(whereSeparator: \.isWhitespace)
        return (Int(counts.first ?? "") ?? 0, Int(counts.dropFirst().first ?? "") ?? 0)
    }

    /// A file's contents at a revision, or nil when it has none.
    func show(_ revision: String, _ path: String) async -> Data? {
        guard let result = try? await run(["show", "\(revision):\(path)"]), result.succeeded else { return nil }
        return Data(result.stdout)
    }

    /// ``show(_:_:)`` on this thread (see ``runWaiting(_:in:)``).
    func showWaiting(_ revision: String, _ path: String) -> Data? {
        guard let result = try? runWaiting(["show", "\(revision):\(path)"]), result.succeeded else { return nil }
        return Data(result.stdout)
    }

    /// ``revision(_:)`` on this thread (see ``runWaiting(_:in:)``).
    func revisionWaiting(_ name: String) -> String? {
        guard let result = try? runWaiting(["rev-parse", "--verify", "--quiet", "\(name)^{commit}"]), result.succeeded
        else { return nil }
        return result.output.trimmed
    }
}
