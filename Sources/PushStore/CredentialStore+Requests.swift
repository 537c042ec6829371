import CredentialFormats
import Foundation

/// Certificate signing requests whose private key waits in the Secret Service until Apple's
/// certificate for it is imported.
extension CredentialStore {
    public struct RequestResult: Sendable {
        public var pending: PendingRequest
        public var request: CertificateRequest
    }

    /// Apple's portal takes only RSA 2048 requests for push certificates.
    public static let requestKeyBits: Int32 = 2048

    /// The pending requests, oldest first; an absent store has none.
    public func pendingRequests() async throws -> [PendingRequest] {
        try await readIndex().requests ?? []
    }

    public func pendingRequest(named alias: String) async throws -> PendingRequest? {
        try await pendingRequests().first { $0.alias == alias }
    }

    public func pendingRequest(publicKeyFingerprint: String) async throws -> PendingRequest? {
        try await pendingRequests().first { $0.publicKeyFingerprint == publicKeyFingerprint }
    }

    /// Makes an RSA 2048 key straight into the Secret Service and writes a CSR signed with it to
    /// `path` (never over an existing file). The key exists only in memory and in the Secret
    /// Service. Either all of it happens (CSR file, secret, index entry) or none of it.
    public func createRequest(
        subject: RequestSubject,
        alias requested: String?,
        path: String
    ) async throws -> RequestResult {
        try subject.validate()
        if let requested { try Self.validateAlias(requested) }
        if FileManager.default.fileExists(atPath: path) {
            throw CredentialError(
                .fileExists,
                path: path,
                "The file exists; nothing was written and no key was made.",
                hint: "Choose another file name for the request."
            )
        }
        let key = try OpenSSL.generateRSAKey(bits: Self.requestKeyBits)
        var request = try CertificateRequest.make(subject: subject, privateKey: key)
        request = try CertificateRequest(der: request.der, path: path)
        let alias = requested ?? PendingRequest.defaultAlias(fingerprint: request.publicKeyFingerprint)
        let pending = PendingRequest(
            alias: alias,
            publicKeyFingerprint: request.publicKeyFingerprint,
            subject: request.subject,
            keyType: "\(request.keyType) \(request.keyBits)",
            requestedAt: Date(),
            requestFile: (path as NSString).lastPathComponent,
            aliasChosen: requested != nil
        )
        let absolute = Self.resolved(URL(fileURLWithPath: path).standardizedFileURL.path)
        return try await withLock { index in
            if index.credentials.contains(where: { $0.alias == alias })
                || (index.requests ?? []).contains(where: { $0.alias == alias })
            {
                throw CredentialError(
                    .aliasTaken,
                    "The store at \(self.path) already has something named \(alias); nothing was written.",
                    hint: "Choose another alias, or leave it out to get one made from the key."
                )
            }
            // Journaled first, so that a request killed before its entry is written leaves nothing:
            // neither a key nobody can find nor a CSR whose key exists nowhere.
            try await self.journal(
                StoreJournal(
                    secrets: [pending.secretItem(store: self.path)],
                    requestFiles: [.init(path: absolute, publicKeyFingerprint: request.publicKeyFingerprint)]
                )
            )
            try await self.secrets.store(key, for: pending.secretItem(store: self.path))
            try PrivateFile.write(Array(request.pem.utf8), to: path, overwrite: false)
            index.requests = (index.requests ?? []) + [pending]
            return RequestResult(pending: pending, request: request)
        }
    }

    /// Imports a certificate that came without its key (Apple's aps.cer) by pairing it with the
    /// pending request that holds its key. The pending request becomes the credential.
    public func completeRequest(
        _ file: CredentialFile,
        alias requested: String?,
        replacing: String? = nil,
        force: Bool = false
    ) async throws -> ImportResult {
        let fingerprint = file.certificate.publicKeyFingerprint
        let requests = try await pendingRequests()
        guard let pending = requests.first(where: { $0.publicKeyFingerprint == fingerprint }) else {
            // Completed before: the request is gone, and the certificate is stored.
            if let existing = try await list().first(where: { $0.sha256 == file.certificate.sha256 }) {
                throw Self.alreadyImported(existing, path: file.path)
            }
            // Another certificate issued for the same request: its key serves a stored credential.
            if let (holder, key) = try await storedKey(publicKeyFingerprint: fingerprint) {
                do {
                    return try await importCertificate(
                        file.replacingKey(key),
                        alias: requested,
                        replacing: replacing,
                        force: force
                    )
                } catch let error as CredentialError where error.code == .sameAppStored && error.alias == holder {
                    throw CredentialError(
                        .sameAppStored,
                        path: file.path,
                        "This certificate was issued for the key of \(holder), which the store already holds for the same topic and environments; nothing was imported.",
                        hint: error.hint,
                        alias: holder
                    )
                }
            }
            let others =
                requests.isEmpty
                ? "The store at \(path) has no pending certificate request."
                : "Pending requests in the store at \(path): "
                    + requests.map { "\($0.alias) (public key SHA-256 \($0.publicKeyFingerprint))" }.joined(
                        separator: "; "
                    ) + "."
            throw CredentialError(
                .noMatchingRequest,
                path: file.path,
                "The file has a certificate but no private key, and no pending request holds the key for its public key (SHA-256 \(fingerprint)). \(others)",
                hint:
                    "Import the .p12 exported together with its key, or give the private key file with the certificate."
            )
        }
        guard let key = try await lookup(pending.secretItem(store: path)) else {
            throw CredentialError(
                .secretNotFound,
                path: file.path,
                "The private key of the pending request \(pending.alias) is missing from the Secret Service, so the certificate cannot be used.",
                hint: "Remove the request from the store, make a new one and have Apple issue a certificate for it.",
                alias: pending.alias
            )
        }
        // A rotation keeps the replaced credential's alias unless another is asked for at import.
        let alias = requested ?? (pending.aliasChosen && replacing == nil ? pending.alias : nil)
        return try await importCertificate(
            file.replacingKey(key),
            alias: alias,
            replacing: replacing,
            force: force,
            completing: pending
        )
    }

    /// The stored certificate credential whose certificate has this public key, with its private
    /// key from the Secret Service.
    func storedKey(publicKeyFingerprint fingerprint: String) async throws -> (alias: String, key: SecretBytes)? {
        for credential in try await list() where credential.kind == .certificate && damage(of: credential) == nil {
            guard (try? await certificate(of: credential))?.certificate.publicKeyFingerprint == fingerprint else {
                continue
            }
            if let key = try await identity(of: credential).privateKeyPKCS8 { return (credential.alias, key) }
        }
        return nil
    }

    /// Takes a pending request out of the index for an import that completes it; throws when
    /// another process completed or removed it meanwhile.
    func take(_ pending: PendingRequest, from index: inout StoreIndex) throws {
        guard let position = index.requests?.firstIndex(of: pending) else {
            throw CredentialError(
                .storeError,
                "The pending request \(pending.alias) was completed or removed while this import ran; nothing changed.",
                hint: "Look at the store's contents and run the import again if it is still needed.",
                alias: pending.alias
            )
        }
        index.requests?.remove(at: position)
        if index.requests?.isEmpty == true { index.requests = nil }
    }

    /// Removes a pending request and its key as one step (see ``remove(alias:)``). Returns the
    /// request and whether a key was found to remove.
    @discardableResult
    public func removeRequest(alias: String) async throws -> (request: PendingRequest, removedSecret: Bool) {
        var removedSecret = false
        let pending = try await withLock { index -> PendingRequest in
            guard let pending = index.requests?.first(where: { $0.alias == alias }) else {
                throw self.notFound(alias, in: index)
            }
            try await self.journal(StoreJournal(secrets: self.withLegacy(pending.secretItem(store: self.path))))
            try self.take(pending, from: &index)
            return pending
        } afterCommit: { pending, settled in
            removedSecret = self.withLegacy(pending.secretItem(store: self.path)).contains(
                where: settled.removedSecrets.contains
            )
            return pending
        }
        return (pending, removedSecret)
    }
}
