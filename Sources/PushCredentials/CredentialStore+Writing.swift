import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CredentialStore {
    // MARK: Writing

    public struct ImportResult: Sendable {
        public var credential: StoredCredential
        public var replaced: StoredCredential?
        /// False when the replaced credential's secret or files could not all be removed.
        public var replacedCleanly = true
    }

    /// The refusal of a certificate the store already holds.
    static func alreadyImported(_ existing: StoredCredential, path: String) -> CredentialError {
        CredentialError(
            .alreadyImported,
            path: path,
            "This certificate is already in the store as \(existing.alias); nothing changed.",
            hint: "To import it again, remove \(existing.alias) from the store first.",
            alias: existing.alias
        )
    }

    /// Imports a certificate bundle that carries its private key.
    public func importCertificate(
        _ file: CredentialFile,
        alias requested: String?,
        replacing: String? = nil,
        force: Bool = false,
        completing pending: PendingRequest? = nil
    ) throws -> ImportResult {
        if !force { try Self.refuseOutsideValidity(file, at: Date()) }
        guard let key = file.privateKeyPKCS8, let summary = file.privateKey else {
            throw CredentialError(
                .noPrivateKey,
                path: file.path,
                "The file has a certificate but no private key, so it cannot authenticate to APNs.",
                hint:
                    "Export the certificate together with its key (Keychain Access: select both, File > Export Items, .p12)."
            )
        }
        guard summary.matchesCertificate else {
            throw CredentialError(
                .keyMismatch,
                path: file.path,
                "The private key in the file does not belong to its certificate.",
                hint: "Export the certificate with its own key; nothing was imported."
            )
        }
        let certificate = file.certificate
        return try withLock { index in
            // A completed request leaves the index with this import (its key moves to the credential).
            if let pending { try self.take(pending, from: &index) }
            if let existing = index.credentials.first(where: { $0.sha256 == certificate.sha256 }) {
                throw Self.alreadyImported(existing, path: file.path)
            }
            let replaced = try self.replacement(named: replacing, in: index)
            if !force, let replaced { try Self.refuseShorterExpiry(file, replacing: replaced) }
            if replaced == nil, requested == nil || requested == Self.defaultAlias(for: certificate),
                let older = index.credentials.first(where: {
                    $0.kind == .certificate && Set($0.topics) == Set(certificate.coveredTopics)
                        && Set($0.environments) == Set(certificate.environments)
                })
            {
                throw CredentialError(
                    .aliasTaken,
                    path: file.path,
                    "The store already has \(older.alias) for the same topic and environments (expires \(CertificateFindings.day(older.notAfter ?? Date()))).",
                    hint:
                        "To rotate, import it as the replacement of \(older.alias): the old one is kept until the new one is stored. To keep both, give the new one another alias.",
                    alias: older.alias
                )
            }
            let alias = try self.chooseAlias(
                requested ?? Self.defaultAlias(for: certificate),
                in: index,
                replacing: replaced
            )
            let keepBundle = file.format == .pkcs12 && !(file.password?.isEmpty ?? true)
            var credential = StoredCredential(
                alias: alias,
                kind: .certificate,
                topics: certificate.coveredTopics,
                environments: certificate.environments,
                importedAt: Date(),
                source: StoredCredential.sourceName(file.path),
                secret: keepBundle ? .pkcs12Password : .privateKey,
                certificateFile: "credentials/\(alias).\(Self.fileTag(certificate)).cert.pem",
                sha256: certificate.sha256,
                subject: certificate.subject,
                teamId: certificate.teamID,
                notBefore: certificate.notBefore,
                notAfter: certificate.notAfter
            )
            // Files first (unreferenced until the index names them), then the secret, then the index.
            let chainPEM = ([certificate] + file.chain).map { PEMWriter.certificate($0.der) }.joined()
            var written: [URL] = []
            do {
                let bundleFile = keepBundle ? "credentials/\(alias).\(Self.fileTag(certificate)).p12" : nil
                try self.journal(files: [credential.certificateFile!] + (bundleFile.map { [$0] } ?? []))
                try self.writeFile(Data(chainPEM.utf8), to: credential.certificateFile!)
                written.append(root.appendingPathComponent(credential.certificateFile!))
                if keepBundle {
                    credential.bundleFile = bundleFile
                    try self.writeFile(Data(file.contents), to: credential.bundleFile!)
                    written.append(root.appendingPathComponent(credential.bundleFile!))
                }
                try self.secrets.store(keepBundle ? file.password! : key, for: credential.secretItem(store: self.path))
            } catch {
                for url in written { try? FileManager.default.removeItem(at: url) }
                throw error
            }
            index.credentials.removeAll { $0.alias == replaced?.alias }
            index.credentials.append(credential)
            return ImportResult(credential: credential, replaced: replaced)
        } afterCommit: { result in
            var result = result
            if let replaced = result.replaced { result.replacedCleanly = self.discard(replaced) }
            if let pending { _ = try? self.secrets.remove(pending.secretItem(store: self.path)) }
            return result
        } onCommitFailure: { result in
            // The index was not written: take back what this import stored.
            _ = try? self.secrets.remove(result.credential.secretItem(store: self.path))
            _ = self.removeFiles(of: result.credential)
        }
    }

    /// Imports a token key: the private key into the Secret Service, metadata into the index.
    public func importTokenKey(
        _ key: ProviderKey,
        topics: [String],
        environments: [PushEnvironment],
        alias requested: String?,
        source: String?,
        replacing: String? = nil
    ) throws -> ImportResult {
        try withLock { index in
            // Importing a key again as its own replacement is how its metadata is redone.
            if let existing = index.credentials.first(where: {
                $0.kind == .tokenKey && $0.keyId == key.keyID && $0.teamId == key.teamID && $0.alias != replacing
            }) {
                throw CredentialError(
                    .alreadyImported,
                    path: source,
                    "Token key \(key.keyID) is already in the store as \(existing.alias); nothing changed.",
                    hint: "To import it again, remove \(existing.alias) from the store first.",
                    alias: existing.alias
                )
            }
            let replaced = try self.replacement(named: replacing, in: index)
            let alias = try self.chooseAlias(
                requested ?? replaced?.alias ?? "token-\(key.keyID)",
                in: index,
                replacing: replaced
            )
            let credential = StoredCredential(
                alias: alias,
                kind: .tokenKey,
                topics: topics,
                environments: environments,
                importedAt: Date(),
                source: source.map(StoredCredential.sourceName),
                secret: .tokenKey,
                teamId: key.teamID,
                keyId: key.keyID,
                publicKeyFingerprint: key.publicKeyFingerprint
            )
            try self.secrets.store(key.pkcs8, for: credential.secretItem(store: self.path))
            index.credentials.removeAll { $0.alias == replaced?.alias }
            index.credentials.append(credential)
            return ImportResult(credential: credential, replaced: replaced)
        } afterCommit: { result in
            var result = result
            // The same key under the same alias is one Secret Service item: keep it.
            if let replaced = result.replaced,
                replaced.secretItem(store: self.path) != result.credential.secretItem(store: self.path)
            {
                result.replacedCleanly = self.discard(replaced)
            }
            return result
        } onCommitFailure: { result in
            if result.replaced?.secretItem(store: self.path) != result.credential.secretItem(store: self.path) {
                _ = try? self.secrets.remove(result.credential.secretItem(store: self.path))
            }
        }
    }
}
