import CredentialFormats
import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a team store's commit may hold: the files apnsctl wrote, staged by name, each checked.
///
/// The store's folder is a working tree that a person also uses: a key exported into it, a stray
/// note, a link, a bundle copied over another. `git add --all` would commit and push each of
/// them to every member. Instead the index, the credential files and secrets the index names,
/// the member list, its signature and `.gitignore` are staged by name, each a regular file (never
/// a link) that is what the index and list say it is; a secret file the index no longer names is
/// staged only as a deletion or as the same secret encrypted again. Anything else stops the
/// commit before anything is staged, naming each file and how to move it out or restore it.
struct TeamStaging {
    var git: Git

    var root: URL { URL(fileURLWithPath: git.directory) }

    /// One path `git status` reports.
    struct Change {
        var code: String
        var path: String

        var isUntracked: Bool { code == "??" }
        /// Whether the last commit holds the path (a file added since is new to the repository).
        var inHead: Bool { !isUntracked && !code.hasPrefix("A") }
    }

    /// A file that is not the store's own, and why.
    struct Finding {
        var path: String
        var why: String
        /// The last commit holds the path: restoring it is the remedy, not moving it out.
        var restorable: Bool
    }

    /// What a name the store keeps is for.
    enum Role {
        case index, members, signature, ignore, secret
        case certificate(StoredCredential)
        case bundle(StoredCredential)
    }

    /// Stages the store's own changes; `upstream` (a merge) also lets in what the remote's commit
    /// holds as it is. Throws, with nothing staged, when the folder holds anything else.
    func stage(mergingFrom upstream: String? = nil) async throws {
        let staged = try await judged(mergingFrom: upstream)
        guard !staged.isEmpty else { return }
        try await git.must(["--literal-pathspecs", "add", "--all", "--"] + staged, what: "stage the store's files")
    }

    /// Throws as ``stage(mergingFrom:)`` does, staging nothing: for a change that must not start
    /// while the folder holds what its commit would refuse.
    func check() async throws {
        _ = try await judged(mergingFrom: nil)
    }

    /// The paths to stage; throws naming every other one.
    private func judged(mergingFrom upstream: String?) async throws -> [String] {
        let changes = try await self.changes()
        guard !changes.isEmpty else { return [] }
        var fromUpstream: Set<String> = []
        if let upstream { fromUpstream = try await sameAsUpstream(upstream, changes) }
        let roles = try self.roles(changes)
        var staged: [String] = []
        var findings: [Finding] = []
        for change in changes {
            if change.code == "D ", roles[change.path] == nil, !Self.exists(root, change.path) {
                // A removal staged already (by a commit that failed after staging, or a merge):
                // git knows the path no more, and naming it again would be an error.
                continue
            } else if fromUpstream.contains(change.path) {
                staged.append(change.path)
            } else if let finding = await judge(change, role: roles[change.path]) {
                findings.append(finding)
            } else {
                staged.append(change.path)
            }
        }
        if !findings.isEmpty { throw refusal(findings) }
        return staged
    }

    /// Every path that differs from the last commit, staged or not, and every untracked one.
    func changes() async throws -> [Change] {
        let output = try await git.must(
            ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=none"],
            what: "read the working tree"
        )
        return output.split(separator: "\0").compactMap { entry in
            guard entry.count > 3 else { return nil }
            return Change(code: String(entry.prefix(2)), path: String(entry.dropFirst(3)))
        }
    }

    /// The changed paths whose content is the remote's commit's (what a merge takes in).
    private func sameAsUpstream(_ upstream: String, _ changes: [Change]) async throws -> Set<String> {
        let differing = try await git.must(
            ["diff", "--name-only", "-z", "--no-renames", upstream, "--"],
            what: "compare the merge with the remote"
        )
        let names = Set(differing.split(separator: "\0").map(String.init))
        return Set(changes.filter { !$0.isUntracked && !names.contains($0.path) }.map(\.path))
    }

    /// The names the store keeps, from the index in the folder (the one being committed).
    private func roles(_ changes: [Change]) throws -> [String: Role] {
        var roles: [String: Role] = [
            "index.json": .index, TeamFile.fileName: .members, TeamFile.signatureFileName: .signature,
            ".gitignore": .ignore,
        ]
        guard Self.exists(root, "index.json") else { return roles }
        let index: StoreIndex
        do {
            index = try ReportSchema.decoder().decode(
                StoreIndex.self,
                from: Data(StoreFile.read(root: root, relative: "index.json", kind: .storeRecord))
            )
        } catch {
            let restorable = changes.first { $0.path == "index.json" }?.inHead ?? true
            throw refusal([Finding(path: "index.json", why: Self.why(root, "index.json"), restorable: restorable)])
        }
        for credential in index.credentials {
            if let file = credential.certificateFile { roles[file] = .certificate(credential) }
            if let file = credential.bundleFile { roles[file] = .bundle(credential) }
            roles[TeamSecretStore.relativePath(of: credential.secretItem(store: root.path))] = .secret
        }
        for request in index.requests ?? [] {
            roles[TeamSecretStore.relativePath(of: request.secretItem(store: root.path))] = .secret
        }
        return roles
    }

    /// Nil when the change is the store's own; else why it is not.
    private func judge(_ change: Change, role: Role?) async -> Finding? {
        let path = change.path
        guard Self.exists(root, path) else {
            // A removal apnsctl made (the index no longer names the file), unless it is named.
            guard role != nil else { return nil }
            return Finding(path: path, why: "the index names it but it is missing", restorable: change.inHead)
        }
        guard let role else {
            // A secret the index no longer names, encrypted again to a new member set.
            if change.inHead, path.hasPrefix(TeamSecretStore.folder + "/"), path.hasSuffix(".age"),
                Self.isAgeFile(root, path)
            {
                return nil
            }
            let what = Self.isLink(root, path) ? "a link" : "a file"
            return Finding(path: path, why: "\(what) apnsctl did not write", restorable: false)
        }
        guard StoreFile.isRegularFile(root: root, relative: path) else {
            return Finding(path: path, why: Self.why(root, path), restorable: change.inHead)
        }
        guard let problem = await check(path, role, inHead: change.inHead) else { return nil }
        return Finding(path: path, why: problem, restorable: change.inHead)
    }

    /// Nil when a regular file the store names holds what the index or list says it does.
    private func check(_ path: String, _ role: Role, inHead: Bool) async -> String? {
        func bytes(_ kind: InputKind) -> [UInt8]? { try? StoreFile.read(root: root, relative: path, kind: kind) }
        switch role {
        case .index:
            return nil
        case .members:
            return (try? TeamFile.read(root: root)) == nil ? "it is not a member list apnsctl wrote" : nil
        case .signature:
            let text = bytes(.storeRecord).map { String(decoding: $0, as: UTF8.self) } ?? ""
            return text.hasPrefix("-----BEGIN SSH SIGNATURE-----") ? nil : "it is not an SSH signature"
        case .ignore:
            return bytes(.storeRecord) == Array(TeamStore.ignored.utf8) ? nil : "it is not the one apnsctl wrote"
        case .secret:
            return Self.isAgeFile(root, path) ? nil : "it is not an age file"
        case .certificate(let credential):
            guard let read = bytes(.credential).flatMap({ try? CredentialFile.decode($0, path: path, password: .none) })
            else { return "it is not a certificate" }
            return TeamIntegrity.same(read.certificate.sha256, credential.sha256)
                ? nil : "it is not the certificate of \(credential.alias) (SHA-256 \(credential.sha256 ?? "none"))"
        case .bundle(let credential):
            // Written once under a name that carries its certificate's fingerprint, never again.
            if inHead { return "it is not the bundle of \(credential.alias) that the last commit holds" }
            guard let checkBundle = git.checkBundle else { return nil }
            do {
                try await checkBundle(credential)
                return nil
            } catch let error as CredentialError where error.code == .notAMember {
                // This clone cannot open it (not a member yet): the index's own name is all there is.
                return nil
            } catch {
                return "it is not the bundle of \(credential.alias) (SHA-256 \(credential.sha256 ?? "none"))"
            }
        }
    }

    func refusal(_ findings: [Finding], committing: String? = nil) -> CredentialError {
        let listed = findings.map { "\($0.path) (\($0.why))" }.joined(separator: ", ")
        var steps: [String] = []
        let strays = findings.filter { !$0.restorable }
        if !strays.isEmpty {
            let paths = strays.map { ShellWords.quote(root.appendingPathComponent($0.path).path) }
            steps.append(
                "move out what is not the store's: mkdir -p ~/apnsctl-moved-out && mv -n -- "
                    + paths.joined(separator: " ") + " ~/apnsctl-moved-out/"
            )
        }
        let restorable = findings.filter(\.restorable)
        if !restorable.isEmpty {
            steps.append(
                "restore what was replaced from the last commit: git -C \(ShellWords.quote(root.path)) checkout HEAD -- "
                    + restorable.map { ShellWords.quote($0.path) }.joined(separator: " ")
            )
        }
        return CredentialError(
            .teamError,
            path: root.path,
            "The store's folder holds what apnsctl did not write, "
                + (committing.map { "which \($0) would push to every member; nothing was made" }
                    ?? "so nothing was committed")
                + ": \(listed). "
                + "A commit of the team store holds only the files apnsctl writes, and is pushed to every member.",
            hint: steps.joined(separator: "; then ").capitalizedFirst + "; then try again."
        )
    }

    // MARK: The folder

    static func exists(_ root: URL, _ relative: String) -> Bool {
        var status = stat()
        return lstat(root.appendingPathComponent(relative).path, &status) == 0
    }

    static func isLink(_ root: URL, _ relative: String) -> Bool {
        var status = stat()
        return lstat(root.appendingPathComponent(relative).path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    static func why(_ root: URL, _ relative: String) -> String {
        isLink(root, relative)
            ? "not a regular file apnsctl wrote: a link in its place" : "not a regular file apnsctl wrote"
    }

    static func isAgeFile(_ root: URL, _ relative: String) -> Bool {
        guard let bytes = try? StoreFile.read(root: root, relative: relative, kind: .encryptedSecret) else {
            return false
        }
        return bytes.starts(with: Array("age-encryption.org/v1\n".utf8))
    }
}

extension String {
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
