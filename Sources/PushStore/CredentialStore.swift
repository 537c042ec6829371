import CredentialFormats
import Foundation

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
        environment: [String: String] = ProcessInfo.processInfo.environment
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
    public func list() throws -> [StoredCredential] {
        try readIndex().credentials
    }

    public func credential(named alias: String) throws -> StoredCredential? {
        try list().first { $0.alias == alias }
    }

    package func readIndex() throws -> StoreIndex {
        if let medium { return try readIndex(from: medium) }
        if try folderState() != .store { return StoreIndex() }
        do {
            // Not through a link: an index that is a link may lead out of the store.
            return try StoreIndexCache.read(root: root, relative: "index.json") { bytes in
                try ReportSchema.decoder().decode(StoreIndex.self, from: Data(bytes))
            }
        } catch {
            let files = credentialFilesPresent()
            throw CredentialError.indexUnreadable(
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
    public func certificate(of credential: StoredCredential) throws -> CredentialFile {
        guard let relative = credential.certificateFile else {
            throw CredentialError.storeError("\(credential.alias) is not a certificate.", hint: nil)
        }
        let file = try readEntryFile(relative, of: credential)
        return try CredentialFile.decode(file.bytes, path: file.name, password: .none)
    }

    /// The certificate with its private key, reading the secret from the Secret Service.
    ///
    /// Read under the store's shared lock, as the index names the credential at that moment:
    /// a credential rotated meanwhile is read as its successor under the same alias, and one
    /// removed meanwhile is said to be gone, never reported as a secret missing.
    public func identity(of credential: StoredCredential) throws -> CredentialFile {
        try withSharedLock { try identityAsIndexed(try current(credential)) }
    }

    /// The entry the index holds now for `credential` (read under the lock by the caller).
    func current(_ credential: StoredCredential) throws -> StoredCredential {
        let index = try readIndex()
        if let same = index.credentials.first(where: { $0 == credential }) { return same }
        if let successor = index.credentials.first(where: { $0.alias == credential.alias }) { return successor }
        throw CredentialError.aliasNotFound(
            credential.alias,
            "\(credential.alias) was removed from the store at \(path) while this command ran.",
            hint: nil
        )
    }

    private func identityAsIndexed(_ credential: StoredCredential) throws -> CredentialFile {
        if let damage = damage(of: credential) { throw damage.error }
        let item = credential.secretItem(store: path)
        guard let secret = try lookup(item) else {
            throw CredentialError.secretNotFound(
                "The secret of \(credential.alias) is missing: the store keeps it \(secrets.placeOf(item)), and it is not there (it was removed outside apnsctl, or the store was copied from another machine).",
                hint: "Remove it from the store and import the bundle again.",
                alias: credential.alias
            )
        }
        switch credential.secret {
        case .pkcs12Password:
            guard let bundle = credential.bundleFile else {
                throw CredentialError.storeError("\(credential.alias) has no bundle file.", hint: nil)
            }
            let file = try readEntryFile(bundle, of: credential)
            return try CredentialFile.decode(file.bytes, path: file.name, password: .fixed(secret))
        case .privateKey:
            let certificate = try self.certificate(of: credential)
            return certificate.replacingKey(secret)
        case .tokenKey, .teamIdentity, .signingKey:
            throw CredentialError.storeError(
                "\(credential.alias) is not a certificate.",
                hint: nil
            )
        }
    }

    /// A stored token key that its secret store holds and never gives back (see
    /// ``SecretStore/remoteTokenKey(for:keyID:teamID:)``), as the index names it now; nil when
    /// the key's bytes are kept (``tokenKey(of:)`` reads them).
    public func remoteTokenKey(of credential: StoredCredential) throws -> RemoteProviderKey? {
        try withSharedLock {
            let current = try current(credential)
            guard current.kind == .tokenKey, let keyID = current.keyID, let teamID = current.teamID else { return nil }
            return try secrets.remoteTokenKey(for: current.secretItem(store: path), keyID: keyID, teamID: teamID)
        }
    }

    /// A stored token key, read under the shared lock as the index names it now (see ``identity(of:)``).
    public func tokenKey(of credential: StoredCredential) throws -> ProviderKey {
        try withSharedLock { try tokenKeyAsIndexed(try current(credential)) }
    }

    private func tokenKeyAsIndexed(_ credential: StoredCredential) throws -> ProviderKey {
        guard credential.kind == .tokenKey, let keyID = credential.keyID, let teamID = credential.teamID else {
            throw CredentialError.storeError(
                "\(credential.alias) is not a complete token key.",
                hint: "Import the .p8 again with its key ID and team ID.",
                alias: credential.alias
            )
        }
        let item = credential.secretItem(store: path)
        guard let secret = try lookup(item) else {
            throw CredentialError.secretNotFound(
                "The private key of \(credential.alias) is missing: the store keeps it \(secrets.placeOf(item)), and it is not there.",
                hint: "Remove it from the store and import the .p8 again.",
                alias: credential.alias
            )
        }
        return try ProviderKey(keyID: keyID, teamID: teamID, pkcs8: secret)
    }

    // MARK: Helpers

    /// A secret of this store, also under the unresolved path an earlier version recorded.
    func lookup(_ item: SecretItem) throws -> SecretBytes? {
        if let secret = try secrets.lookup(item) { return secret }
        guard let givenPath else { return nil }
        var legacy = item
        legacy.store = givenPath
        return try secrets.lookup(legacy)
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
            throw CredentialError.invalidAlias(
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
            throw CredentialError.aliasTaken(
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

    /// Removes the files an entry names inside the credentials folder; a path that leads
    /// anywhere else is left alone (see ``DamagedEntry``).
    func removeFiles(of credential: StoredCredential) -> [String] {
        var removed: [String] = []
        if let medium {
            for relative in [credential.certificateFile, credential.bundleFile].compactMap({ $0 })
            where isInside(relative) {
                if (try? medium.remove(relative)) == true { removed.append("\(medium.name)/\(relative)") }
            }
            return removed
        }
        for relative in [credential.certificateFile, credential.bundleFile].compactMap({ $0 }) {
            guard let path = paths.resolve(relative).path else { continue }
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append(path) }
        }
        return removed
    }

    /// Runs `body` on the index under an exclusive lock and writes the index back atomically
    /// when it returns. `body` journals what it creates or discards (see ``StoreJournal``)
    /// before doing it; the index's rename is the change, and settling the journal against the
    /// index written (or, when `body` throws, the index as it was) completes or undoes the rest.
    /// `afterCommit` runs after that, still under the lock; then the change observer is told,
    /// still under the lock, and what it hands back (a team store's push) runs once the lock is
    /// released, so that nothing slow keeps other commands waiting on the store.
    package func withLock<R>(
        _ body: (inout StoreIndex) throws -> R,
        afterCommit: (R, Settled) -> R = { result, _ in result }
    ) throws -> R {
        let (result, followUp) = try lockedChange(body, afterCommit: afterCommit)
        followUp?()
        return result
    }

    private func lockedChange<R>(
        _ body: (inout StoreIndex) throws -> R,
        afterCommit: (R, Settled) -> R
    ) throws -> (R, StoreChangeFollowUp?) {
        // Ask the Secret Service before taking the lock, so a slow or missing one never keeps
        // other apnsctl processes waiting on the store.
        try secrets.checkAvailable()
        if let medium {
            try medium.checkAvailable()
            return try medium.exclusive { try change(body, afterCommit: afterCommit) }
        }
        try prepareFolder()
        let lockPath = StoreLock.path(root: root)
        let lock: StoreLock
        switch StoreLock.acquire(at: lockPath, .exclusive) {
        case .success(let held):
            lock = held
        case .failure(.open(let code)):
            throw CredentialError.storeError(
                path: lockPath,
                "The store's lock file cannot be opened (\(String(cString: strerror(code)))).",
                hint: "Check the store folder's owner and permissions."
            )
        case .failure(.lock):
            throw CredentialError.storeError(path: lockPath, "The store cannot be locked.", hint: nil)
        }
        defer { lock.release() }
        return try change(body, afterCommit: afterCommit)
    }

    /// One change, under the store's exclusive lock (whatever the medium's lock is).
    private func change<R>(
        _ body: (inout StoreIndex) throws -> R,
        afterCommit: (R, Settled) -> R
    ) throws -> (R, StoreChangeFollowUp?) {
        var index = try readIndex()
        if try !indexPresent() {
            // A new store gets its index before any credential file, so that files are never
            // found without the index that accounts for them.
            try writeIndex(index)
        }
        // What a command killed earlier left is completed or undone before anything else.
        settle(index)
        let before = index
        let result: R
        do {
            result = try body(&index)
            try writeIndex(index)
        } catch {
            // Nothing was committed: take back what `body` journaled.
            settle(before)
            throw error
        }
        let committed = afterCommit(result, settle(index))
        return (committed, changeObserver?.storeChanged(self, from: before, to: index))
    }

    package func prepareFolder() throws {
        _ = try folderState()
        for folder in [root, credentialsFolder] {
            do {
                try FileManager.default.createDirectory(
                    at: folder,
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700]
                )
                chmod(folder.path, 0o700)
            } catch {
                throw CredentialError.storeError(
                    path: folder.path,
                    "The store folder cannot be created (\(error.localizedDescription)).",
                    hint: "Keep the store in a folder this user can create and write."
                )
            }
        }
        let credentials = StorePaths.realPath(credentialsFolder.path)
        guard credentials == paths.credentialsFolder else {
            throw CredentialError.storeError(
                path: credentialsFolder.path,
                "The store's credentials folder leads to \(credentials ?? "nowhere"), outside the store; nothing was written.",
                hint: "Make credentials a plain folder inside the store (move the link away) and try again."
            )
        }
    }

    /// Writes `data` to `relative` atomically (see ``PrivateFile/write(_:to:overwrite:)``).
    func writeFile(_ data: Data, to relative: String) throws {
        if let medium { return try medium.write([UInt8](data), to: relative) }
        try PrivateFile.write([UInt8](data), to: root.appendingPathComponent(relative).path, overwrite: true)
    }

    /// Writes the index: the step at which a change happens.
    func writeIndex(_ index: StoreIndex) throws {
        let data = try ReportSchema.encoder().encode(index)
        if let medium { return try medium.writeIndex([UInt8](data)) }
        try writeFile(data, to: "index.json")
    }

    func indexPresent() throws -> Bool {
        if let medium { return try medium.read("index.json") != nil }
        return FileManager.default.fileExists(atPath: indexURL.path)
    }

    /// The index a medium keeps; none yet is an empty store, and one that cannot be decoded
    /// is an error, never an empty store.
    func readIndex(from medium: any StoreMedium) throws -> StoreIndex {
        guard let bytes = try medium.read("index.json") else { return StoreIndex() }
        do {
            return try ReportSchema.decoder().decode(StoreIndex.self, from: Data(bytes))
        } catch {
            throw CredentialError.indexUnreadable(
                path: "\(medium.name)/index.json",
                "The store's index cannot be read (\(UserFacing.describe(error))); it was changed outside apnsctl.",
                hint:
                    "Restore the index from an earlier version (the secret manager keeps them), or import each credential again into a new store."
            )
        }
    }
}
