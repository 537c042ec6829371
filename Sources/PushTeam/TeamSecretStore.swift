import CredentialFormats
import Foundation
import PushStore

/// A team store's secrets: one age file per secret in `secrets/`, encrypted to every member in
/// `team.json`. Writing needs only the members' public recipients; reading needs this member's
/// identity, which is loaded once per process and kept in memory.
public final class TeamSecretStore: SecretStore, @unchecked Sendable {
    public let root: URL
    public let identity: TeamIdentity
    let age: AgeTool
    /// Where a Secret Service identity is read from (the system's, or a test's).
    let keyring: any SecretStore
    private let lock = NSLock()
    private var loadedIdentity: SecretBytes?

    static let folder = "secrets"

    /// Recipients given outright (init, before any list is trusted); else the trusted list's.
    private let fixedRecipients: [String]?

    init(
        root: URL,
        identity: TeamIdentity,
        age: AgeTool = AgeTool(),
        keyring: any SecretStore = LibSecretStore(),
        recipients: [String]? = nil
    ) {
        self.root = root.standardizedFileURL
        self.identity = identity
        self.age = age
        self.keyring = keyring
        fixedRecipients = recipients
    }

    /// `secrets/ALIAS.KIND.ID.age`: the fingerprint or key ID in the name, so that a rotation writes
    /// the new secret beside the old one, and two members' imports of different credentials never
    /// touch the same file.
    static func relativePath(of item: SecretItem) -> String {
        "\(folder)/\(item.alias).\(item.kind.rawValue).\(item.identifier).age"
    }

    static func item(fromFileName name: String, store: String) -> SecretItem? {
        guard name.hasSuffix(".age") else { return nil }
        let parts = name.dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, let kind = SecretItem.Kind(rawValue: String(parts[parts.count - 2])) else {
            return nil
        }
        return SecretItem(
            store: store,
            alias: parts.dropLast(2).joined(separator: "."),
            kind: kind,
            identifier: String(parts[parts.count - 1])
        )
    }

    func url(of item: SecretItem) -> URL { root.appendingPathComponent(Self.relativePath(of: item)) }

    /// Where an item is kept, as a clause for messages: an age file of the repository.
    public func placeOf(_ item: SecretItem) -> String {
        "in \(Self.relativePath(of: item)), encrypted with age to every member"
    }

    func identityBytes() async throws -> SecretBytes {
        try Self.checkNotHalfMade(root)
        if let loaded = lock.withLock({ loadedIdentity }) { return loaded }
        let bytes = try await identity.load(secrets: keyring)
        lock.withLock { loadedIdentity = bytes }
        return bytes
    }

    // MARK: SecretStore

    /// The member list secrets are encrypted to: the trusted one, never an unsigned change that
    /// arrived from the remote (docs/team.md, "Signed membership").
    func trustedRecipients() async throws -> [String] {
        if let fixedRecipients { return fixedRecipients }
        return try await TeamTrust(root: root, git: Git(directory: root.path, environment: age.environment))
            .trustedTeam()
            .recipients
    }

    public func store(_ secret: SecretBytes, for item: SecretItem) async throws {
        let recipients = try await trustedRecipients()
        let encrypted = try await age.encrypt(secret, to: recipients)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent(Self.folder),
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        try PrivateFile.write(encrypted, to: url(of: item).path, overwrite: true)
        WrittenRecipients(root: root).record([encrypted], to: recipients)
    }

    public func lookup(_ item: SecretItem) async throws -> SecretBytes? {
        let file = Self.relativePath(of: item)
        guard let ciphertext = try StoreFile.readIfPresent(root: root, relative: file, kind: .encryptedSecret) else {
            return nil
        }
        let secret = try await decrypt(ciphertext, file: file, alias: item.alias)
        try TeamIntegrity(root: root).verify(secret, for: item)
        return secret
    }

    /// Decrypts one of the team's age files with this member's identity.
    func decrypt(_ ciphertext: [UInt8], file: String, alias: String?) async throws -> SecretBytes {
        switch try await age.decrypt(ciphertext, identity: try await identityBytes()) {
        case .decrypted(let secret):
            return secret
        case .notARecipient:
            throw CredentialError(
                .notAMember,
                path: file,
                "This member's identity (from \(identity.describes)) is not among the recipients of \(alias ?? file): "
                    + "you have not been added to the team yet, or you were removed.",
                hint: "Ask a member to add this clone's recipient (the one joining the team printed), then sync.",
                alias: alias,
                remedy: .addedByAMember
            )
        case .badIdentity:
            if case .environment(let value) = identity, TeamIdentity.looksLikeAFileName(value) {
                // Not echoed: the variable names a file here, but its value is never printed.
                throw CredentialError(
                    .notAMember,
                    path: nil,
                    "\(TeamIdentity.environmentVariable) holds the name of a file, not an identity: it takes the AGE-SECRET-KEY-1… line itself.",
                    hint:
                        "Give that file as the identity instead, or set \(TeamIdentity.environmentVariable) to the line inside it.",
                    alias: alias,
                    remedy: .identityGivenAsFile
                )
            }
            throw CredentialError(
                .notAMember,
                path: nil,
                "The identity from \(identity.describes) is not an age identity (an AGE-SECRET-KEY-1… line, or an ssh-ed25519 private key).",
                hint: "Give the identity age-keygen made for this member.",
                alias: alias
            )
        case .damaged:
            throw CredentialError(
                .tampered,
                path: file,
                "This age file of the store cannot be decrypted: it is damaged, or is not an age file; it was changed outside apnsctl, so \(alias ?? "the secret") is refused as tampered.",
                hint:
                    "Look at who changed it (git log --stat -- \(ShellWords.quote(file))), restore it (git checkout -- \(ShellWords.quote(file))), or have a member import the credential again.",
                alias: alias
            )
        }
    }

    @discardableResult
    public func remove(_ item: SecretItem) async throws -> Bool {
        (try? FileManager.default.removeItem(at: url(of: item))) != nil
    }

    /// A store whose `team init` was interrupted is neither plain nor a team store yet.
    static func checkNotHalfMade(_ root: URL) throws {
        guard SetupMarker.read(root: root) != nil else { return }
        throw CredentialError(
            .teamError,
            path: root.path,
            "Making this store a team store was interrupted; it is neither a plain store nor a team store yet.",
            hint: "Run the same team init again: it finishes what was committed, or undoes the rest."
        )
    }

    /// Writing needs age and the member list; reading asks for the identity when it needs it.
    public func checkAvailable() async throws {
        try Self.checkNotHalfMade(root)
        _ = try age.program("age")
    }

    public func items(store: String) async throws -> [SecretItem] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(Self.folder).path))
        return (names ?? []).sorted().compactMap { Self.item(fromFileName: $0, store: store) }
    }

    /// Every secret file, relative to the store.
    func secretFiles() -> [String] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(Self.folder).path))
        return (names ?? []).filter { $0.hasSuffix(".age") }.sorted().map { "\(Self.folder)/\($0)" }
    }

    /// Encrypts every secret again to `recipients` (after a member is added or removed, or a merge
    /// brought secrets encrypted to another member set). Each file is replaced whole.
    func reencryptAll(to recipients: [String]) async throws -> Int {
        var count = 0
        var written: [[UInt8]] = []
        for relative in secretFiles() {
            let url = root.appendingPathComponent(relative)
            let secret = try await decrypt(
                try StoreFile.read(root: root, relative: relative, kind: .encryptedSecret),
                file: relative,
                alias: nil
            )
            let encrypted = try await age.encrypt(secret, to: recipients)
            try PrivateFile.write(encrypted, to: url.path, overwrite: true)
            written.append(encrypted)
            count += 1
        }
        WrittenRecipients(root: root).record(written, to: recipients, replacing: true)
        return count
    }
}
