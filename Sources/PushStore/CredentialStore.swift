import CredentialFormats
import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folder that keeps imported credentials' public parts, with an index, under a lock.
///
/// Writes are atomic (temporary file, fsync, rename) and made under an exclusive `flock` on
/// `.lock`, so concurrent `apnsctl` processes never corrupt the index; an import interrupted at
/// any point leaves the old index (plus, at worst, an unreferenced file that the next write
/// removes).
public struct CredentialStore: Sendable {
    public let root: URL
    public internal(set) var secrets: any SecretStore
    /// The path as given, when a link made it differ from `root`: earlier versions recorded
    /// secrets under it, and they are still found there.
    let givenPath: String?
    /// Where the index and files are kept when not in the folder `root` (see ``StoreMedium``).
    public let medium: (any StoreMedium)?
    /// Told of every change once the new index is in place, still under the lock (a team store
    /// commits and pushes there): the one place where store-changing commands are observed.
    package var changeObserver: (any StoreChangeObserver)?

    /// The store is known by its resolved path (symbolic links followed), wherever it is
    /// recorded or compared: the Secret Service's attributes, messages, pending requests. A
    /// link to the store and the store itself are then one store.
    public init(root: URL, secrets: any SecretStore = LibSecretStore()) {
        self.init(root: root, secrets: secrets, medium: nil)
    }

    init(root: URL, secrets: any SecretStore, medium: (any StoreMedium)?) {
        self.secrets = secrets
        self.medium = medium
        if medium != nil {
            self.root = root
            givenPath = nil
            return
        }
        let given = root.standardizedFileURL.path
        self.root = URL(fileURLWithPath: Self.resolved(given))
        givenPath = given == self.root.path ? nil : given
    }

    /// `path` with its symbolic links resolved; the part that does not exist yet is kept as given
    /// under its deepest existing folder, resolved.
    static func resolved(_ path: String) -> String {
        var existing = path
        var rest: [String] = []
        while !existing.isEmpty, existing != "/" {
            if let real = StorePaths.realPath(existing) {
                return ([real == "/" ? "" : real] + rest.reversed()).joined(separator: "/")
            }
            rest.append((existing as NSString).lastPathComponent)
            existing = (existing as NSString).deletingLastPathComponent
        }
        return path
    }

    /// The folder given (`explicit`), else `APNSCTL_STORE`, else `$XDG_DATA_HOME/apnsctl` (`~/.local/share/apnsctl`).
    public static func defaultRoot(
        explicit: String? = nil,
        environment: [String: String] = ProcessEnvironment.subset(["APNSCTL_STORE", "XDG_DATA_HOME", "HOME"])
    ) -> URL {
        if let explicit, !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        if let fromEnvironment = environment["APNSCTL_STORE"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment)
        }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("apnsctl")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/apnsctl")
    }

    var indexURL: URL { root.appendingPathComponent("index.json") }
    var credentialsFolder: URL { root.appendingPathComponent("credentials") }
    /// The store's name: its folder's resolved path, or its medium's name.
    public var path: String { medium?.name ?? root.path }

    // MARK: Reading

    /// The credentials in the store; an absent or empty folder is an empty store, and anything
    /// else that has no index (or an index that cannot be read) is an error, never an empty store.
    public func list() async throws -> [StoredCredential] {
        try await readIndex().credentials
    }

    public func credential(named alias: String) async throws -> StoredCredential? {
        try await list().first { $0.alias == alias }
    }

    package func readIndex() async throws -> StoreIndex {
        if let medium { return try await readIndex(from: medium) }
        return try readFolderIndex()
    }

    /// The credentials of a store folder, read on the calling thread: its index is a small
    /// file, and no medium or Secret Service is asked. For a shell's completion, which answers
    /// synchronously; a store kept by a medium has none to give here.
    public func listFolder() throws -> [StoredCredential] {
        medium == nil ? try readFolderIndex().credentials : []
    }

    private func readFolderIndex() throws -> StoreIndex {
        if try folderState() != .store { return StoreIndex() }
        do {
            // Not through a link: an index that is a link may lead out of the store.
            return try StoreIndexCache.read(root: root, relative: "index.json", decode: StoreIndex.decoded(from:))
        } catch {
            let files = credentialFilesPresent()
            throw CredentialError(
                .indexUnreadable,
                path: indexURL.path,
                "The store's index cannot be read (\(UserFacing.describe(error))); it was edited or damaged outside apnsctl. "
                    + (files.isEmpty
                        ? "The credentials folder holds no files."
                        : "The credentials folder holds \(files.count) file(s) (\(StoreFolder.preview(files)))."),
                hint: Self.recoveryHint
            )
        }
    }

    /// The public certificate of a stored certificate credential.
    public func certificate(of credential: StoredCredential) async throws -> CredentialFile {
        guard let relative = credential.certificateFile else {
            throw CredentialError(.storeError, "\(credential.alias) is not a certificate.", hint: nil)
        }
        let file = try await readEntryFile(relative, of: credential)
        let decoded = try CredentialFile.decode(file.bytes, path: file.name, password: .none)
        return try checkIndexed(decoded, of: credential, name: file.name)
    }

    /// The certificate with its private key, reading the secret from the Secret Service.
    ///
    /// Read under the store's shared lock, as the index names the credential at that moment:
    /// a credential rotated meanwhile is read as its successor under the same alias, and one
    /// removed meanwhile is said to be gone, never reported as a secret missing.
    public func identity(of credential: StoredCredential) async throws -> CredentialFile {
        try await withSharedLock { try await identityAsIndexed(try await current(credential)) }
    }

    /// The entry the index holds now for `credential` (read under the lock by the caller).
    func current(_ credential: StoredCredential) async throws -> StoredCredential {
        let index = try await readIndex()
        if let same = index.credentials.first(where: { $0 == credential }) { return same }
        if let successor = index.credentials.first(where: { $0.alias == credential.alias }) { return successor }
        throw CredentialError.aliasNotFound(
            credential.alias,
            "\(credential.alias) was removed from the store at \(path) while this command ran.",
            hint: nil
        )
    }

    private func identityAsIndexed(_ credential: StoredCredential) async throws -> CredentialFile {
        if let damage = damage(of: credential) { throw damage.error }
        let item = credential.secretItem(store: path)
        guard let secret = try await lookup(item) else {
            throw CredentialError(
                .secretNotFound,
                "The secret of \(credential.alias) is missing: the store keeps it \(secrets.placeOf(item)), and it is not there (it was removed outside apnsctl, or the store was copied from another machine).",
                hint: "Remove it from the store and import the bundle again.",
                alias: credential.alias
            )
        }
        switch credential.secret {
        case .pkcs12Password:
            guard let bundle = credential.bundleFile else {
                throw CredentialError(.storeError, "\(credential.alias) has no bundle file.", hint: nil)
            }
            let file = try await readEntryFile(bundle, of: credential)
            let decoded = try CredentialFile.decode(file.bytes, path: file.name, password: .fixed(secret))
            return try checkIndexed(decoded, of: credential, name: file.name)
        case .privateKey:
            let certificate = try await self.certificate(of: credential)
            return certificate.replacingKey(secret)
        case .tokenKey, .teamIdentity, .signingKey:
            throw CredentialError(.storeError, "\(credential.alias) is not a certificate.", hint: nil)
        }
    }

    /// A stored token key that its secret store holds and never gives back (see
    /// ``SecretStore/remoteTokenKey(for:keyID:teamID:)``), as the index names it now; nil when
    /// the key's bytes are kept (``tokenKey(of:)`` reads them).
    public func remoteTokenKey(of credential: StoredCredential) async throws -> RemoteProviderKey? {
        try await withSharedLock {
            let current = try await current(credential)
            guard current.kind == .tokenKey, let keyID = current.keyID, let teamID = current.teamID else { return nil }
            let item = current.secretItem(store: path)
            guard let remote = try await secrets.remoteTokenKey(for: item, keyID: keyID, teamID: teamID) else {
                return nil
            }
            if let der = remote.publicKeyDER {
                let fingerprint = PublicKeyFingerprint.of(subjectPublicKeyInfo: der)
                try checkIndexed(publicKeyFingerprint: fingerprint, of: current, place: secrets.placeOf(item))
            }
            return remote
        }
    }

    /// A stored token key, read under the shared lock as the index names it now (see ``identity(of:)``).
    public func tokenKey(of credential: StoredCredential) async throws -> ProviderKey {
        try await withSharedLock { try await tokenKeyAsIndexed(try await current(credential)) }
    }

    private func tokenKeyAsIndexed(_ credential: StoredCredential) async throws -> ProviderKey {
        guard credential.kind == .tokenKey, let keyID = credential.keyID, let teamID = credential.teamID else {
            throw CredentialError(
                .storeError,
                "\(credential.alias) is not a complete token key.",
                hint: "Import the .p8 again with its key ID and team ID.",
                alias: credential.alias
            )
        }
        let item = credential.secretItem(store: path)
        guard let secret = try await lookup(item) else {
            throw CredentialError(
                .secretNotFound,
                "The private key of \(credential.alias) is missing: the store keeps it \(secrets.placeOf(item)), and it is not there.",
                hint: "Remove it from the store and import the .p8 again.",
                alias: credential.alias
            )
        }
        let key = try ProviderKey(keyID: keyID, teamID: teamID, pkcs8: secret)
        try checkIndexed(publicKeyFingerprint: key.publicKeyFingerprint, of: credential, place: secrets.placeOf(item))
        return key
    }

    // MARK: Helpers

    /// A secret of this store, also under the unresolved path an earlier version recorded.
    func lookup(_ item: SecretItem) async throws -> SecretBytes? {
        if let secret = try await secrets.lookup(item) { return secret }
        guard let givenPath else { return nil }
        var legacy = item
        legacy.store = givenPath
        return try await secrets.lookup(legacy)
    }

    /// Part of the certificate's fingerprint in its file names, so that a rotation never writes
    /// over the files of the credential it replaces (which the index still names until the end).
    static func fileTag(_ certificate: PushCertificate) -> String {
        String(certificate.sha256.replacingOccurrences(of: ":", with: "").lowercased().prefix(12))
    }

    public static func defaultAlias(for certificate: PushCertificate) -> String {
        let topic = certificate.bundleID ?? certificate.coveredTopics.first ?? certificate.commonName ?? "certificate"
        let environment: String
        switch Set(certificate.environments) {
        case [.sandbox]: environment = "sandbox"
        case [.production]: environment = "production"
        case [.sandbox, .production]: environment = "universal"
        default: environment = "unknown"
        }
        return sanitize("\(topic)-\(environment)")
    }

    /// Aliases become file names: keep them to letters, digits, dot, dash and underscore.
    static func sanitize(_ alias: String) -> String {
        String(alias.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "-" }).trimmingCharacters(
            in: CharacterSet(charactersIn: ".-")
        )
    }

    public static func validateAlias(_ alias: String) throws {
        guard !alias.isEmpty, alias.count <= 100, sanitize(alias) == alias else {
            throw CredentialError(
                .invalidAlias,
                "The alias \"\(alias)\" may use only letters, digits, '.', '-' and '_', and may not start or end with '.' or '-'.",
                hint: "For example com.example.app-production."
            )
        }
    }

    /// The alias asked for, else the replaced credential's (rotation keeps the name scripts
    /// use), else `fallback`. An alias asked for that is taken is refused; a made-up one that is
    /// taken gets a numbered suffix.
    func chooseAlias(
        _ requested: String?,
        otherwise fallback: String,
        in index: StoreIndex,
        replacing: StoredCredential?
    ) throws -> String {
        let wanted = requested ?? replacing?.alias ?? fallback
        try Self.validateAlias(wanted)
        let taken = Set(index.credentials.map(\.alias) + (index.requests ?? []).map(\.alias)).subtracting(
            [replacing?.alias].compactMap { $0 }
        )
        if !taken.contains(wanted) { return wanted }
        if requested != nil {
            throw CredentialError(
                .aliasTaken,
                "The store at \(path) already has something named \(wanted); nothing was imported.",
                hint: "Choose another alias, or name the credential it replaces.",
                alias: wanted
            )
        }
        var number = 2
        while taken.contains("\(wanted)-\(number)") { number += 1 }
        return "\(wanted)-\(number)"
    }

    func replacement(named alias: String?, in index: StoreIndex) throws -> StoredCredential? {
        guard let alias else { return nil }
        guard let old = index.credentials.first(where: { $0.alias == alias }) else { throw notFound(alias, in: index) }
        return old
    }

    func notFound(_ alias: String, in index: StoreIndex) -> CredentialError {
        let known = index.credentials.map(\.alias)
        return CredentialError.aliasNotFound(
            alias,
            "No credential named \(alias) in the store at \(path).",
            hint: known.isEmpty
                ? "The store is empty: import the credential first."
                : "Known aliases: \(known.joined(separator: ", "))."
        )
    }
}
