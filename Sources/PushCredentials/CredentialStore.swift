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
    public let secrets: any SecretStore

    public init(root: URL, secrets: any SecretStore = LibSecretStore()) {
        self.root = root.standardizedFileURL
        self.secrets = secrets
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
    public var path: String { root.path }

    // MARK: Reading

    /// The credentials in the store; an absent or empty folder is an empty store, and anything
    /// else that has no index (or an index that cannot be read) is an error, never an empty store.
    public func list() throws -> [StoredCredential] {
        try readIndex().credentials
    }

    public func credential(named alias: String) throws -> StoredCredential? {
        try list().first { $0.alias == alias }
    }

    func readIndex() throws -> StoreIndex {
        if try folderState() != .store { return StoreIndex() }
        do {
            let data = Data(try InputFile.read(path: indexURL.path, kind: .storeRecord))
            return try ReportSchema.decoder().decode(StoreIndex.self, from: data)
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
    public func certificate(of credential: StoredCredential) throws -> CredentialFile {
        guard let relative = credential.certificateFile else {
            throw CredentialError(.storeError, path: nil, "\(credential.alias) is not a certificate.", hint: nil)
        }
        return try CredentialFile.read(path: try entryFile(relative, of: credential))
    }

    /// The certificate with its private key, reading the secret from the Secret Service.
    public func identity(of credential: StoredCredential) throws -> CredentialFile {
        if let damage = damage(of: credential) { throw damage.error }
        let item = credential.secretItem(store: path)
        guard let secret = try secrets.lookup(item) else {
            throw CredentialError(
                .secretNotFound,
                path: nil,
                "The secret of \(credential.alias) is missing from the Secret Service (it was removed outside apnsctl, or the store was copied from another machine).",
                hint: "Remove it from the store and import the bundle again.",
                alias: credential.alias
            )
        }
        switch credential.secret {
        case .pkcs12Password:
            guard let bundle = credential.bundleFile else {
                throw CredentialError(.storeError, path: nil, "\(credential.alias) has no bundle file.", hint: nil)
            }
            return try CredentialFile.read(path: try entryFile(bundle, of: credential), password: .fixed(secret))
        case .privateKey:
            let certificate = try self.certificate(of: credential)
            return certificate.replacingKey(secret)
        case .tokenKey:
            throw CredentialError(
                .storeError,
                path: nil,
                "\(credential.alias) is a token key, not a certificate.",
                hint: nil
            )
        }
    }

    public func tokenKey(of credential: StoredCredential) throws -> ProviderKey {
        guard credential.kind == .tokenKey, let keyID = credential.keyId, let teamID = credential.teamId else {
            throw CredentialError(
                .storeError,
                path: nil,
                "\(credential.alias) is not a complete token key.",
                hint: "Import the .p8 again with its key ID and team ID.",
                alias: credential.alias
            )
        }
        guard let secret = try secrets.lookup(credential.secretItem(store: path)) else {
            throw CredentialError(
                .secretNotFound,
                path: nil,
                "The private key of \(credential.alias) is missing from the Secret Service.",
                hint: "Remove it from the store and import the .p8 again.",
                alias: credential.alias
            )
        }
        return try ProviderKey(keyID: keyID, teamID: teamID, pkcs8: secret)
    }

    // MARK: Helpers

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
                path: nil,
                "The alias \"\(alias)\" may use only letters, digits, '.', '-' and '_', and may not start or end with '.' or '-'.",
                hint: "For example com.example.app-production."
            )
        }
    }

    func chooseAlias(_ wanted: String, in index: StoreIndex, replacing: StoredCredential?) throws -> String {
        try Self.validateAlias(wanted)
        let taken = Set(index.credentials.map(\.alias) + (index.requests ?? []).map(\.alias)).subtracting(
            [replacing?.alias].compactMap { $0 }
        )
        if !taken.contains(wanted) { return wanted }
        // A default alias gets a numbered suffix; one the user chose is refused.
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
        return CredentialError(
            .aliasNotFound,
            path: nil,
            "No credential named \(alias) in the store at \(path).",
            hint: known.isEmpty
                ? "The store is empty: import the credential first."
                : "Known aliases: \(known.joined(separator: ", ")).",
            alias: alias
        )
    }

    /// Removes a replaced credential's secret and files (their names differ from the new
    /// credential's, so nothing of the new one is touched). Returns whether all went.
    func discard(_ old: StoredCredential) -> Bool {
        let secretRemoved = (try? secrets.remove(old.secretItem(store: path))) != nil
        let files = [old.certificateFile, old.bundleFile].compactMap { $0 }
        return secretRemoved && removeFiles(of: old).count == files.count
    }

    /// Removes the files an entry names inside the credentials folder; a path that leads
    /// anywhere else is left alone (see ``DamagedEntry``).
    func removeFiles(of credential: StoredCredential) -> [String] {
        var removed: [String] = []
        for relative in [credential.certificateFile, credential.bundleFile].compactMap({ $0 }) {
            guard let path = paths.resolve(relative).path else { continue }
            if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append(path) }
        }
        return removed
    }

    /// Runs `body` on the index under an exclusive lock and writes the index back atomically
    /// when it returns; `afterCommit` runs after the new index is in place, still under the lock;
    /// `onCommitFailure` undoes what `body` did outside the index when the index cannot be written.
    func withLock<R>(
        _ body: (inout StoreIndex) throws -> R,
        afterCommit: (R) -> R = { $0 },
        onCommitFailure: (R) -> Void = { _ in }
    ) throws -> R {
        // Ask the Secret Service before taking the lock, so a slow or missing one never keeps
        // other apnsctl processes waiting on the store.
        try secrets.checkAvailable()
        try prepareFolder()
        let lockPath = root.appendingPathComponent(".lock").path
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CredentialError(
                .storeError,
                path: lockPath,
                "The store's lock file cannot be opened (\(String(cString: strerror(errno)))).",
                hint: "Check the store folder's owner and permissions."
            )
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else {
            throw CredentialError(.storeError, path: lockPath, "The store cannot be locked.", hint: nil)
        }
        defer { flock(fd, LOCK_UN) }
        var index = try readIndex()
        if !FileManager.default.fileExists(atPath: indexURL.path) {
            // A new store gets its index before any credential file, so that files are never
            // found without the index that accounts for them.
            try writeFile(try ReportSchema.encoder().encode(index), to: "index.json")
        }
        var result = try body(&index)
        do {
            try writeFile(try ReportSchema.encoder().encode(index), to: "index.json")
        } catch {
            onCommitFailure(result)
            throw error
        }
        result = afterCommit(result)
        removeUnreferencedFiles(index)
        return result
    }

    func prepareFolder() throws {
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
                throw CredentialError(
                    .storeError,
                    path: folder.path,
                    "The store folder cannot be created (\(error.localizedDescription)).",
                    hint: "Keep the store in a folder this user can create and write."
                )
            }
        }
        let credentials = StorePaths.realPath(credentialsFolder.path)
        guard credentials == paths.credentialsFolder else {
            throw CredentialError(
                .storeError,
                path: credentialsFolder.path,
                "The store's credentials folder leads to \(credentials ?? "nowhere"), outside the store; nothing was written.",
                hint: "Make credentials a plain folder inside the store (move the link away) and try again."
            )
        }
    }

    /// Writes `data` to `relative` atomically (see ``PrivateFile/write(_:to:overwrite:)``).
    func writeFile(_ data: Data, to relative: String) throws {
        try PrivateFile.write([UInt8](data), to: root.appendingPathComponent(relative).path, overwrite: true)
    }
}
