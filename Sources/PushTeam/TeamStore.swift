import CredentialFormats
import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A credential store shared through a git repository, its secrets encrypted with age to every
/// member (see docs/team.md). The folder is a plain store with `team.json`, `secrets/` and a
/// `.git` beside its index, so everything that reads a store works on it unchanged.
public struct TeamStore: Sendable {
    public let root: URL
    public let identity: TeamIdentity
    public let environment: [String: String]
    /// The keyring that holds a member's identity (the Secret Service).
    public let keyring: any SecretStore
    /// Where the team store tells the person what became of a change's commit beyond the
    /// command's own output (pushed, or committed locally only), as a value a front end words.
    public let notify: @Sendable (TeamPublication) -> Void

    public init(
        root: URL,
        identityFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        keyring: any SecretStore = LibSecretStore(),
        notify: @escaping @Sendable (TeamPublication) -> Void = { _ in }
    ) async {
        self.root = root.standardizedFileURL
        self.environment = environment
        self.identity = await TeamIdentity.resolve(root: self.root, file: identityFile, environment: environment)
        self.keyring = keyring
        self.notify = notify
    }

    public static func isTeamStore(_ root: URL) -> Bool { TeamFile.isTeamStore(root: root) }

    /// A remote given as a relative path means the folder from here, not from inside the store.
    static func resolveRemote(_ remote: String) -> String {
        guard !remote.hasPrefix("/"), !remote.contains(":"),
            FileManager.default.fileExists(atPath: remote)
        else { return remote }
        return URL(fileURLWithPath: remote).standardizedFileURL.path
    }

    var git: Git {
        // A new bundle is committed once it opens with its stored password as the certificate
        // the index names (the lookup checks it); this clone's identity reads the password.
        let (root, secrets) = (root, secrets)
        return Git(directory: root.path, environment: environment) { credential in
            _ = try await secrets.lookup(credential.secretItem(store: root.path))
        }
    }
    var trust: TeamTrust { TeamTrust(root: root, git: git) }
    var age: AgeTool { AgeTool(environment: environment) }

    public func members() throws -> TeamFile { try TeamFile.read(root: root) }

    /// The store every command uses: secrets from the repository's age files, and each change
    /// committed and pushed.
    public func credentialStore() -> CredentialStore {
        var store = CredentialStore(
            root: root,
            secrets: TeamSecretStore(root: root, identity: identity, age: age, keyring: keyring)
        )
        store.changeObserver = TeamCommitter(team: self)
        return store
    }

    var secrets: TeamSecretStore { TeamSecretStore(root: root, identity: identity, age: age, keyring: keyring) }

    /// Before the first push of a clone whose remote could not be reached when it was made: take
    /// the branch the remote's HEAD names (master, main…), so that a plain `git clone` checks out
    /// the team store instead of warning that HEAD names a branch that does not exist. Asks the
    /// remote without the store's lock (never call it under the lock), renames under it.
    func alignWithRemoteHead() async {
        let branch = await git.branch
        guard await git.revision("origin/\(branch)") == nil, let remote = await git.remoteURL,
            let heads = try? await git.run(["ls-remote", "--heads", "origin"]), heads.succeeded,
            heads.output.trimmed.isEmpty,
            let wanted = try? await Self.defaultBranch(of: remote, environment: environment), wanted != branch
        else { return }
        _ = try? await withStoreLock {
            guard await git.branch == branch else { return }
            _ = try await git.run(["branch", "-m", branch, wanted])
        }
    }

    /// Pushes what was just committed (`revision`, else HEAD) and says what became of it. It
    /// waits on the network, so it runs without the store's lock (never call it under the lock:
    /// it takes the lock for the moment it records the head pushed).
    func publish(committed subject: String, revision: String? = nil) async -> TeamPublication {
        await alignWithRemoteHead()
        do {
            var head = revision
            if head == nil { head = await git.revision("HEAD") }
            let pushing = head ?? "HEAD"
            switch try await git.push(pushing) {
            case .pushed: break
            case .remoteAhead: return .committedNotPushed(subject: subject, reason: .remoteAhead)
            case .failed(let complaint):
                return .committedNotPushed(subject: subject, reason: .unreachable(detail: Git.words(complaint)))
            }
            // The remote's head is this commit now: the head to find again at the next sync.
            try? await withStoreLock {
                guard var state = trust.loadState() else { return }
                state.syncedHead = pushing
                try trust.save(state)
            }
            return .pushed(subject: subject)
        } catch {
            return .committedNotPushed(subject: subject, reason: .failed(detail: UserFacing.describe(error)))
        }
    }

    /// Runs `body` under the store's exclusive lock, the same one every store change takes.
    func withStoreLock<R>(_ body: () async throws -> R) async throws -> R {
        try await StoreLock.withLock(root: root) { try await body() }
    }

    /// Files the store keeps for itself and never shares.
    static let ignored = ".lock\n.writing\n.*.tmp\ncredentials/.*.tmp\nsecrets/.*.tmp\n\(SetupMarker.fileName)\n"

    /// The git identity of commits: the person's own when git has one, else the member name.
    func configureClone(teamID: String, member: String, recipient: String, signing: SigningPublicKey) async throws {
        try await git.must(["config", "apnsctl.team-id", teamID], what: "record the team")
        try await git.must(["config", "apnsctl.member", member], what: "record the member name")
        try await git.must(["config", "apnsctl.recipient", recipient], what: "record the member's recipient")
        try await git.must(
            ["config", "apnsctl.signing-key", signing.fingerprint],
            what: "record the member's signing key"
        )
        if await git.config("user.name") == nil {
            try await git.must(["config", "user.name", member], what: "set user.name")
        }
        if await git.config("user.email") == nil {
            try await git.must(["config", "user.email", "\(member)@apnsctl.invalid"], what: "set user.email")
        }
    }

    // MARK: Signing

    /// This member's signing key, from the Secret Service. CI and servers have none: they read,
    /// and only members who sign may change who the secrets are encrypted to.
    func signingKey() async throws -> SigningKey {
        let refusal = CredentialError(
            .noSigningKey,
            path: nil,
            "Changing the team's member list needs a member's signing key, and none is available here: "
                + "this clone reads the secrets with an identity only (as CI and servers do).",
            hint: "Ask a member who works from their own clone (made by team init or team join) to make the change."
        )
        guard let member = await memberName, let fingerprint = await git.config("apnsctl.signing-key"),
            let team = (try? await trust.trustedTeam()) ?? (try? TeamFile.read(root: root))
        else { throw refusal }
        let item = TeamIdentity.signingItem(teamID: team.teamID, member: member, fingerprint: fingerprint)
        guard let text = try await keyring.lookup(item), let key = SigningKey(openSSH: text),
            key.publicKey.fingerprint == fingerprint
        else { throw refusal }
        return key
    }

    /// Writes `team` and its signature by `key`; returns the signed version (not yet committed).
    @discardableResult
    func writeSigned(_ team: TeamFile, with key: SigningKey) throws -> SignedMemberList {
        let bytes = try team.encoded()
        let signature = try key.sign(bytes, namespace: TeamFile.signatureNamespace)
        try PrivateFile.write(bytes, to: root.appendingPathComponent(TeamFile.fileName).path, overwrite: true)
        try PrivateFile.write(
            Array(signature.utf8),
            to: root.appendingPathComponent(TeamFile.signatureFileName).path,
            overwrite: true
        )
        return SignedMemberList(bytes: bytes, signature: signature, commit: nil)
    }

    // MARK: Recipients

    /// This process's recipient: derived from an identity it was given, or recorded by init/join.
    public func ownRecipient() async -> String? {
        switch identity {
        case .environment(let bytes): return try? await age.recipient(of: bytes)
        case .file(let path):
            guard let data = try? Data(InputFile.read(path: path, kind: .identity)),
                let line = AgeTool.identityLine(in: [UInt8](data))
            else { return nil }
            return try? await age.recipient(of: line)
        case .secretService(let item): return item.identifier
        case .none: return await git.config("apnsctl.recipient")
        }
    }
}
