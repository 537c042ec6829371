import CredentialFormats
import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TeamStore {
    public struct Setup: Sendable {
        public var member: String
        public var recipient: String
        public var remote: String
        /// This member's public signing key (recorded in the member list; a member who adds them names it).
        public var signingKey: SigningPublicKey
        /// Aliases whose secrets were moved from the Secret Service into the repository (init).
        public var encrypted: [String] = []
        /// What became of the first commit (init).
        public var published: TeamPublication?
        /// The members the joiner now trusts, with their keys (join).
        public var members: [TeamFile.Member] = []
        /// A newer member list the repository holds that is not trusted (join).
        public var pending: UntrustedMembership?
        /// An interrupted `init` found and finished (true) or undone before this one (false).
        public var repaired: Bool?
    }

    /// Makes the store at `root` (plain, or new) a team store backed by `remote`, with `name` as its
    /// first member: a new age identity and signing key go to the Secret Service, every secret of
    /// the store is encrypted to it and leaves the Secret Service, and the result is committed and
    /// pushed. All or nothing: an interrupted init is finished (once committed) or undone by the next.
    public static func initialize(
        root: URL,
        remote: String,
        name: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        keyring: any SecretStore = LibSecretStore(),
        notify: @escaping @Sendable (TeamPublication) -> Void = { _ in }
    ) async throws -> Setup {
        try await withPrivateFiles {
            try TeamFile.validateName(name)
            let root = root.standardizedFileURL
            let remote = resolveRemote(remote)
            var repaired: Bool?
            if let marker = SetupMarker.read(root: root) {
                let store = await TeamStore(root: root, environment: environment, keyring: keyring, notify: notify)
                if let finished = try await store.finishInterruptedInit(marker) { return finished }
                try await store.undoInterruptedInit(marker)
                repaired = false
            }
            if isTeamStore(root) {
                throw CredentialError(
                    .teamError,
                    path: root.path,
                    "This store is a team store already.",
                    hint: "Its status shows its members, trust and what waits to be pushed.",
                    remedy: .teamStoreReviewed
                )
            }
            let plain = CredentialStore(root: root, secrets: keyring)
            try plain.checkFolder()
            try await keyring.checkAvailable()
            let age = AgeTool(environment: environment)
            _ = try age.program("age")
            try plain.prepareFolder()
            try TeamStaging.checkBeforeInit(root: root, index: (try? await plain.readIndex()) ?? StoreIndex())
            let git = Git(directory: root.path, environment: environment)
            let probe = try await git.run(["ls-remote", "--heads", "--", remote], in: root.path)
            if probe.succeeded, !probe.output.trimmed.isEmpty {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "\(remote) already holds a repository with commits; a team store starts from an empty one.",
                    hint: "To use that team's store, join it as \(name) into an empty store folder.",
                    remedy: .teamJoined(remote: remote, name: name)
                )
            }
            let (identity, recipient) = try await age.generateIdentity()
            let signing = SigningKey()
            let team = TeamFile(
                teamID: UUID().uuidString.lowercased(),
                version: 1,
                members: [TeamFile.Member(name: name, recipient: recipient, signingKey: signing.publicKey)]
            )
            let marker = SetupMarker(
                teamID: team.teamID,
                member: name,
                recipient: recipient,
                signingFingerprint: signing.publicKey.fingerprint,
                madeRepository: !FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path)
            )
            // Written before anything else, so that an interruption at any later point is found.
            try marker.write(root: root)
            try await keyring.store(identity, for: marker.identityItem)
            try await keyring.store(signing.openSSHPrivateKey, for: marker.signingItem)
            let store = await TeamStore(root: root, environment: environment, keyring: keyring, notify: notify)
            var aliases: [String] = []
            try await plain.withLock { index in
                let list = try store.writeSigned(team, with: signing)
                try PrivateFile.write(
                    Array(ignored.utf8),
                    to: root.appendingPathComponent(".gitignore").path,
                    overwrite: true
                )
                let secrets = TeamSecretStore(
                    root: root,
                    identity: .environment(identity),
                    age: age,
                    keyring: keyring,
                    recipients: team.recipients
                )
                for (alias, item) in Self.storeSecrets(index, root: root) {
                    guard let secret = try await keyring.lookup(item) else { continue }
                    try await secrets.store(secret, for: item)
                    aliases.append(alias)
                }
                if marker.madeRepository {
                    let branch = try await defaultBranch(of: remote, environment: environment) ?? "main"
                    try await git.must(["init", "--quiet", "--initial-branch=\(branch)"], what: "make the repository")
                }
                try await store.configureClone(
                    teamID: team.teamID,
                    member: name,
                    recipient: recipient,
                    signing: signing.publicKey
                )
                try await git.must(["remote", "add", "--", "origin", remote], what: "name the remote")
                try await git.commitAll(
                    "Start the team store with member \(name)\n\n\(aliases.count) credential(s) encrypted to \(recipient)"
                        + (aliases.isEmpty ? "" : ": " + aliases.joined(separator: ", "))
                        + "\nSigning key: \(signing.publicKey.fingerprint)"
                )
                var committed = list
                committed.commit = await git.revision("HEAD")
                try store.trust.trust(committed)
            }
            guard var setup = try await store.finishInterruptedInit(marker) else {
                throw CredentialError(
                    .teamError,
                    path: root.path,
                    "The team store's first commit is missing.",
                    hint: nil
                )
            }
            setup.encrypted = aliases
            setup.repaired = repaired
            return setup
        }
    }

    /// Each secret a store's index names, with its alias.
    static func storeSecrets(_ index: StoreIndex, root: URL) -> [(String, SecretItem)] {
        index.credentials.map { ($0.alias, $0.secretItem(store: root.path)) }
            + (index.requests ?? []).map { ($0.alias, $0.secretItem(store: root.path)) }
    }

    /// Finishes an init whose first commit was made: the secrets leave the Secret Service (the
    /// repository holds them now, encrypted), the commit is pushed, the marker goes. Nil when
    /// the commit was not made (the init is then undone).
    func finishInterruptedInit(_ marker: SetupMarker) async throws -> Setup? {
        guard await git.revision("HEAD") != nil, await git.show("HEAD", TeamFile.fileName) != nil,
            let team = try? TeamFile.read(root: root), let me = team.member(named: marker.member),
            let signingKey = me.signingKey
        else { return nil }
        if trust.loadState() == nil, let list = await trust.version(at: "HEAD") { try trust.trust(list) }
        let index = (try? await CredentialStore(root: root, secrets: keyring).readIndex()) ?? StoreIndex()
        var encrypted: [String] = []
        for (alias, item) in Self.storeSecrets(index, root: root)
        where StoreFile.isRegularFile(root: root, relative: TeamSecretStore.relativePath(of: item)) {
            _ = try? await keyring.remove(item)
            encrypted.append(alias)
        }
        let published = await publish(committed: "Start the team store with member \(marker.member)")
        let branch = await git.branch
        _ = try? await git.run(["branch", "--set-upstream-to=origin/\(branch)"])
        if let head = await git.revision("origin/\(branch)"), let list = trust.loadState()?.list {
            try trust.trust(list, syncedHead: head)
        }
        SetupMarker.remove(root: root)
        return Setup(
            member: marker.member,
            recipient: marker.recipient,
            remote: await git.remoteURL ?? "",
            signingKey: signingKey,
            encrypted: encrypted,
            published: published,
            repaired: true
        )
    }

    /// Undoes an init that never made its first commit: its files, the repository it made and
    /// the keys it put in the Secret Service go; the store's own secrets were never removed.
    func undoInterruptedInit(_ marker: SetupMarker) async throws {
        for name in [TeamFile.fileName, TeamFile.signatureFileName, ".gitignore", TeamSecretStore.folder] {
            try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
        }
        if marker.madeRepository { try? FileManager.default.removeItem(at: root.appendingPathComponent(".git")) }
        _ = try? await keyring.remove(marker.identityItem)
        _ = try? await keyring.remove(marker.signingItem)
        SetupMarker.remove(root: root)
    }

    /// Runs `body` with a umask of 077, so that everything it and its children (git) write is
    /// private whatever the person's umask; PrivateFile sets modes on its own files besides.
    static func withPrivateFiles<R>(_ body: () async throws -> R) async rethrows -> R {
        let previous = umask(0o077)
        defer { umask(previous) }
        return try await body()
    }

    /// The branch an empty remote will serve to a plain `git clone` (its HEAD), so that CI's clone
    /// checks out the team store; found by cloning the empty repository, which is all git offers.
    /// Nil when the remote cannot be read now (the store is made anyway, and its first push takes
    /// the remote's branch, ``TeamStore/alignWithRemoteHead()``) or its HEAD names no branch. A
    /// probe that did not end by itself (git killed by a signal) is no answer: an error, not a
    /// guess that the store's branch is `main`.
    static func defaultBranch(of remote: String, environment: [String: String]) async throws -> String? {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-remote-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        let git = Git(directory: probe.deletingLastPathComponent().path, environment: environment)
        let cloned = try await git.run(["clone", "--quiet", "--bare", "--", remote, probe.path])
        if let signal = cloned.signal {
            throw CredentialError(
                .teamError,
                "git was stopped by signal \(signal) while reading which branch the remote serves; nothing was pushed.",
                hint: "Run the command again."
            )
        }
        guard cloned.succeeded,
            let head = try? await git.run(["symbolic-ref", "--short", "HEAD"], in: probe.path), head.succeeded
        else { return nil }
        let branch = head.output.trimmed
        return branch.isEmpty ? nil : branch
    }
}

/// What `team init` is making, written before it makes anything (`.team-setup.json`, never
/// committed), so that the next `team init` finishes or undoes an interrupted one and no key it
/// put in the Secret Service is left behind.
struct SetupMarker: Codable {
    var teamID: String
    var member: String
    var recipient: String
    var signingFingerprint: String
    /// Whether init made the git repository (and so may remove it).
    var madeRepository: Bool

    static let fileName = ".team-setup.json"

    var identityItem: SecretItem { TeamIdentity.item(teamID: teamID, member: member, recipient: recipient) }
    var signingItem: SecretItem {
        TeamIdentity.signingItem(teamID: teamID, member: member, fingerprint: signingFingerprint)
    }

    func write(root: URL) throws {
        try PrivateFile.write(
            [UInt8](try JSONEncoder().encode(self)),
            to: root.appendingPathComponent(Self.fileName).path,
            overwrite: true
        )
    }

    static func read(root: URL) -> SetupMarker? {
        guard let bytes = try? StoreFile.readIfPresent(root: root, relative: fileName, kind: .storeRecord),
            let marker = try? JSONDecoder().decode(SetupMarker.self, from: Data(bytes)),
            TeamFile.isValidTeamID(marker.teamID)
        else { return nil }
        return marker
    }

    static func remove(root: URL) {
        unlink(root.appendingPathComponent(fileName).path)
    }
}
