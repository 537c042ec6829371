import Foundation

extension TeamStore {
    public struct Setup: Sendable {
        public var member: String
        public var recipient: String
        public var remote: String
        /// Aliases whose secrets were moved from the Secret Service into the repository (init).
        public var encrypted: [String] = []
        /// What became of the first commit (init), as the person should read it.
        public var published: String?
        /// The command a member runs to add this one (join).
        public var addCommand: String?
    }

    /// Makes the store at `root` (plain, or new) a team store backed by `remote`, with `name` as its
    /// first member: a new age identity goes to the Secret Service, every secret of the store is
    /// encrypted to it and leaves the Secret Service, and the result is committed and pushed.
    public static func initialize(
        root: URL,
        remote: String,
        name: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        keyring: any SecretStore = LibSecretStore(),
        notify: @escaping @Sendable (String) -> Void = { _ in }
    ) throws -> Setup {
        try TeamFile.validateName(name)
        let root = root.standardizedFileURL
        let remote = resolveRemote(remote)
        if isTeamStore(root) {
            throw CredentialError(
                .teamError,
                path: root.path,
                "This store is a team store already.",
                hint: "See it with `apnsctl team status`."
            )
        }
        let plain = CredentialStore(root: root, secrets: keyring)
        try plain.checkFolder()
        try keyring.checkAvailable()
        let age = AgeTool(environment: environment)
        _ = try age.program("age")
        try plain.prepareFolder()
        var git = Git(directory: root.path, environment: environment)
        let probe = try git.run(["ls-remote", "--heads", remote], in: root.path)
        if probe.succeeded, !probe.output.trimmed.isEmpty {
            throw CredentialError(
                .teamError,
                path: nil,
                "\(remote) already holds a repository with commits; a team store starts from an empty one.",
                hint:
                    "To use that team's store, join it: `apnsctl team join \(remote) --name \(name)` into an empty store folder."
            )
        }
        let (identity, recipient) = try age.generateIdentity()
        let team = TeamFile(
            teamID: UUID().uuidString.lowercased(),
            members: [TeamFile.Member(name: name, recipient: recipient, addedAt: Date(), addedBy: nil)]
        )
        let identityItem = TeamIdentity.item(teamID: team.teamID, member: name, recipient: recipient)
        try keyring.store(identity, for: identityItem)
        git.environment = environment
        let store = TeamStore(root: root, environment: environment, keyring: keyring, notify: notify)
        var moved: [SecretItem] = []
        var aliases: [String] = []
        try plain.withLock { index in
            try team.write(root: root)
            try PrivateFile.write(
                Array(ignored.utf8),
                to: root.appendingPathComponent(".gitignore").path,
                overwrite: true
            )
            let secrets = TeamSecretStore(root: root, identity: .environment(identity), age: age, keyring: keyring)
            let items =
                index.credentials.map { ($0.alias, $0.secretItem(store: root.path)) }
                + (index.requests ?? []).map { ($0.alias, $0.secretItem(store: root.path)) }
            for (alias, item) in items {
                guard let secret = try keyring.lookup(item) else { continue }
                try secrets.store(secret, for: item)
                moved.append(item)
                aliases.append(alias)
            }
            if git.revision("HEAD") == nil,
                !FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path)
            {
                let branch = defaultBranch(of: remote, environment: environment) ?? "main"
                try git.must(["init", "--quiet", "--initial-branch=\(branch)"], what: "make the repository")
            }
            try store.configureClone(member: name, recipient: recipient)
            try git.must(["remote", "add", "origin", remote], what: "name the remote")
            try git.commitAll(
                "Start the team store with member \(name)\n\n\(aliases.count) credential(s) encrypted to \(recipient)"
                    + (aliases.isEmpty ? "" : ": " + aliases.joined(separator: ", "))
            )
        }
        // The repository holds them now, encrypted: the Secret Service keeps only the identity.
        for item in moved { _ = try? keyring.remove(item) }
        let published = store.publish(committed: "Start the team store with member \(name)")
        _ = try? git.run(["branch", "--set-upstream-to=origin/\(git.branch)"])
        return Setup(member: name, recipient: recipient, remote: remote, encrypted: aliases, published: published)
    }

    /// The branch an empty remote will serve to a plain `git clone` (its HEAD), so that CI's clone
    /// checks out the team store; found by cloning the empty repository, which is all git offers.
    static func defaultBranch(of remote: String, environment: [String: String]) -> String? {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-remote-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        let git = Git(directory: probe.deletingLastPathComponent().path, environment: environment)
        guard (try? git.run(["clone", "--quiet", "--bare", remote, probe.path]))?.succeeded == true,
            let head = try? git.run(["symbolic-ref", "--short", "HEAD"], in: probe.path), head.succeeded
        else { return nil }
        let branch = head.output.trimmed
        return branch.isEmpty ? nil : branch
    }

    /// Clones the team store at `remote` into the empty folder `root`, makes this member's age
    /// identity (kept in the Secret Service) and returns the command a member runs to add it.
    /// Until then the clone shows metadata only.
    public static func join(
        root: URL,
        remote: String,
        name: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        keyring: any SecretStore = LibSecretStore()
    ) throws -> Setup {
        try TeamFile.validateName(name)
        let root = root.standardizedFileURL
        let remote = resolveRemote(remote)
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        guard existing.isEmpty else {
            throw CredentialError(
                .teamError,
                path: root.path,
                "A team store is joined into an empty folder, and this one holds \(existing.count) item(s).",
                hint: "Give another folder with --store, or move this one away."
            )
        }
        try keyring.checkAvailable()
        let age = AgeTool(environment: environment)
        _ = try age.program("age")
        let createdFolder = !FileManager.default.fileExists(atPath: root.path)
        let parent = root.deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let git = Git(directory: root.path, environment: environment)
        let cloned = try git.run(["clone", "--quiet", remote, root.path], in: parent)
        func undo() {
            if createdFolder {
                try? FileManager.default.removeItem(at: root)
            } else {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
                    try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
                }
            }
        }
        guard cloned.succeeded else {
            undo()
            throw CredentialError(
                .teamError,
                path: nil,
                "git could not clone \(remote): \(cloned.stderr.trimmed.split(separator: "\n").suffix(2).joined(separator: " "))",
                hint: "Check the URL and that this machine can reach it (git ls-remote \(remote))."
            )
        }
        do {
            // A bare repository made with another default branch than the one pushed (master and
            // main) clones without a checkout: take the branch the team store was pushed to.
            if git.revision("HEAD") == nil {
                let branches = try git.must(
                    ["branch", "--remotes", "--format=%(refname:short)"],
                    what: "list branches"
                )
                .split(separator: "\n").map(String.init).filter { $0 != "origin/HEAD" && $0 != "origin" }
                if let branch = branches.first(where: { $0 == "origin/main" }) ?? branches.first {
                    let local = String(branch.dropFirst("origin/".count))
                    try git.must(["checkout", "--quiet", "-B", local, "--track", branch], what: "check out \(branch)")
                }
            }
            guard isTeamStore(root) else {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "\(remote) is a git repository but not an apnsctl team store (it has no team.json).",
                    hint: "Check the URL; a member makes the team store with `apnsctl team init`."
                )
            }
            let team = try TeamFile.read(root: root)
            if team.member(named: name) != nil {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "The team already has a member named \(name).",
                    hint:
                        "Join under another name (the names of the members: \(team.members.map(\.name).joined(separator: ", ")))."
                )
            }
            chmod(root.path, 0o700)
            let (identity, recipient) = try age.generateIdentity()
            try keyring.store(identity, for: TeamIdentity.item(teamID: team.teamID, member: name, recipient: recipient))
            let store = TeamStore(root: root, environment: environment, keyring: keyring)
            try store.configureClone(member: name, recipient: recipient)
            return Setup(
                member: name,
                recipient: recipient,
                remote: remote,
                addCommand: "apnsctl team add \(name) \(recipient)"
            )
        } catch {
            undo()
            throw error
        }
    }
}
