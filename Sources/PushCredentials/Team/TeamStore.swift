import Foundation

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
    /// Where the team store tells the person what it did beyond the command's own output
    /// (pushed, or committed locally only).
    public let notify: @Sendable (String) -> Void

    public init(
        root: URL,
        identityFile: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        keyring: any SecretStore = LibSecretStore(),
        notify: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.root = root.standardizedFileURL
        self.environment = environment
        self.identity = TeamIdentity.resolve(root: self.root, file: identityFile, environment: environment)
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

    var git: Git { Git(directory: root.path, environment: environment) }
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

    /// Pushes what was just committed and says what became of it.
    func publish(committed subject: String) -> String {
        do {
            if let complaint = try git.push() {
                if complaint.contains("rejected") || complaint.contains("fetch first") {
                    return
                        "team store: committed \"\(subject)\"; the remote has changes this clone has not seen, so it was not pushed. Run `apnsctl team sync\(storeArgument)` to merge and push."
                }
                return
                    "team store: committed \"\(subject)\" here only: the remote could not be reached (\(complaint.split(separator: "\n").last ?? "")). Run `apnsctl team sync\(storeArgument)` once it can."
            }
            return "team store: committed and pushed \"\(subject)\"."
        } catch {
            return "team store: committed \"\(subject)\" here only (\(UserFacing.describe(error)))."
        }
    }

    /// ` --store DIR` when this is not the default store, so that printed commands work as pasted.
    var storeArgument: String {
        CredentialStore.defaultRoot(environment: environment).standardizedFileURL.path == root.path
            ? "" : " --store \(root.path)"
    }

    /// Runs `body` under the store's exclusive lock, the same one every store change takes.
    func withStoreLock<R>(_ body: () throws -> R) throws -> R {
        let lockPath = root.appendingPathComponent(".lock").path
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else {
            if fd >= 0 { close(fd) }
            throw CredentialError(.storeError, path: lockPath, "The store cannot be locked.", hint: nil)
        }
        defer {
            flock(fd, LOCK_UN)
            close(fd)
        }
        return try body()
    }

    /// Files the store keeps for itself and never shares.
    static let ignored = ".lock\n.writing\n.*.tmp\ncredentials/.*.tmp\nsecrets/.*.tmp\n"

    /// The git identity of commits: the person's own when git has one, else the member name.
    func configureClone(member: String, recipient: String) throws {
        try git.must(["config", "apnsctl.member", member], what: "record the member name")
        try git.must(["config", "apnsctl.recipient", recipient], what: "record the member's recipient")
        if git.config("user.name") == nil { try git.must(["config", "user.name", member], what: "set user.name") }
        if git.config("user.email") == nil {
            try git.must(["config", "user.email", "\(member)@apnsctl.invalid"], what: "set user.email")
        }
    }

    // MARK: Recipients

    /// This process's recipient: derived from an identity it was given, or recorded by init/join.
    public func ownRecipient() -> String? {
        switch identity {
        case .environment(let bytes): return try? age.recipient(of: bytes)
        case .file(let path):
            guard let data = try? Data(InputFile.read(path: path, kind: .identity)),
                let line = AgeTool.identityLine(in: [UInt8](data))
            else { return nil }
            return try? age.recipient(of: line)
        case .secretService(let item): return item.identifier
        case .none: return git.config("apnsctl.recipient")
        }
    }
}

extension CredentialStore {
    /// The store at `root`: a team store when the folder is one (its secrets in age files, every
    /// change committed and pushed), else the plain store with its secrets in the Secret Service.
    public static func opening(
        root: URL,
        identityFile: String? = nil,
        notify: @escaping @Sendable (String) -> Void = { _ in }
    ) -> CredentialStore {
        guard TeamStore.isTeamStore(root) else { return CredentialStore(root: root) }
        return TeamStore(root: root, identityFile: identityFile, notify: notify).credentialStore()
    }
}
