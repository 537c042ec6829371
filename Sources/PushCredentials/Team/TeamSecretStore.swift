import Foundation

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

    init(root: URL, identity: TeamIdentity, age: AgeTool = AgeTool(), keyring: any SecretStore = LibSecretStore()) {
        self.root = root.standardizedFileURL
        self.identity = identity
        self.age = age
        self.keyring = keyring
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

    func identityBytes() throws -> SecretBytes {
        lock.lock()
        defer { lock.unlock() }
        if let loadedIdentity { return loadedIdentity }
        let bytes = try identity.load(secrets: keyring)
        loadedIdentity = bytes
        return bytes
    }

    // MARK: SecretStore

    public func store(_ secret: SecretBytes, for item: SecretItem) throws {
        let team = try TeamFile.read(root: root)
        let encrypted = try age.encrypt(secret, to: team.recipients)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent(Self.folder),
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        try PrivateFile.write(encrypted, to: url(of: item).path, overwrite: true)
    }

    public func lookup(_ item: SecretItem) throws -> SecretBytes? {
        guard let ciphertext = try? Data(InputFile.read(path: url(of: item).path, kind: .encryptedSecret)) else {
            return nil
        }
        let secret = try decrypt([UInt8](ciphertext), file: Self.relativePath(of: item), alias: item.alias)
        try TeamIntegrity(root: root).verify(secret, for: item)
        return secret
    }

    /// Decrypts one of the team's age files with this member's identity.
    func decrypt(_ ciphertext: [UInt8], file: String, alias: String?) throws -> SecretBytes {
        switch try age.decrypt(ciphertext, identity: try identityBytes()) {
        case .success(let secret):
            return secret
        case .failure(.notARecipient):
            throw CredentialError(
                .notAMember,
                path: file,
                "This member's identity (from \(identity.describes)) is not among the recipients of \(alias ?? file): "
                    + "you have not been added to the team yet, or you were removed.",
                hint: "Ask a member to add you with the command `apnsctl team join` printed, then sync.",
                alias: alias
            )
        case .failure(.failed(let reason)):
            throw CredentialError(
                .tampered,
                path: file,
                "The age file cannot be decrypted (\(reason)); it was damaged or replaced outside apnsctl.",
                hint: "Restore it from the repository's history, or have a member import the credential again.",
                alias: alias
            )
        }
    }

    @discardableResult
    public func remove(_ item: SecretItem) throws -> Bool {
        (try? FileManager.default.removeItem(at: url(of: item))) != nil
    }

    /// Writing needs age and the member list; reading asks for the identity when it needs it.
    public func checkAvailable() throws {
        _ = try age.program("age")
        _ = try TeamFile.read(root: root)
    }

    public func items(store: String) throws -> [SecretItem] {
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
    func reencryptAll(to recipients: [String]) throws -> Int {
        var count = 0
        for relative in secretFiles() {
            let url = root.appendingPathComponent(relative)
            let secret = try decrypt(
                try InputFile.read(path: url.path, kind: .encryptedSecret),
                file: relative,
                alias: nil
            )
            try PrivateFile.write(try age.encrypt(secret, to: recipients), to: url.path, overwrite: true)
            count += 1
        }
        return count
    }
}
