import CredentialFormats
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
        /// The same token key stored under another alias (rolled out beside the one replaced),
        /// folded into the new entry: its alias is gone, what it served is served still.
        public var merged: StoredCredential?
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
    ///
    /// The new credential's alias is `alias`, else the alias of the credential it replaces, else
    /// one made from its topic and environments. A chosen alias that is taken is refused; so is
    /// a certificate for the same topics and environments as a stored one, unless it replaces
    /// that one or `force` keeps both.
    public func importCertificate(
        _ file: CredentialFile,
        alias requested: String?,
        replacing: String? = nil,
        force: Bool = false,
        completing pending: PendingRequest? = nil
    ) async throws -> ImportResult {
        if !force {
            try Self.refuseNonPush(file)
            try Self.refuseOutsideValidity(file, at: Date())
        }
        let key = try file.clientPrivateKey()
        let certificate = file.certificate
        return try await withLock { index in
            // A completed request leaves the index with this import (its key moves to the credential).
            if let pending { try self.take(pending, from: &index) }
            if let existing = index.credentials.first(where: { $0.sha256 == certificate.sha256 }) {
                throw Self.alreadyImported(existing, path: file.path)
            }
            let replaced = try self.replacement(named: replacing, in: index)
            if !force, let replaced {
                try Self.refuseShorterExpiry(file, replacing: replaced)
                try Self.refuseNarrowerCoverage(file, replacing: replaced)
            }
            if replaced == nil, !force, let older = Self.sameApp(as: certificate, in: index) {
                throw CredentialError(
                    .sameAppStored,
                    path: file.path,
                    "The store already has \(older.alias) for the same topic and environments (expires \(MessageDate.day(older.notAfter ?? Date()))); nothing was imported.",
                    hint:
                        "To rotate, import it as the replacement of \(older.alias): it takes that alias, and the old one is kept until the new one is stored. To keep both on purpose, force it.",
                    alias: older.alias
                )
            }
            let alias = try self.chooseAlias(
                requested,
                otherwise: Self.defaultAlias(for: certificate),
                in: index,
                replacing: replaced
            )
            let keepBundle = file.format == .pkcs12 && !(file.password?.isEmpty ?? true)
            let tag = Self.fileTag(certificate)
            var credential = StoredCredential(
                alias: alias,
                kind: .certificate,
                topics: certificate.coveredTopics,
                environments: certificate.environments,
                importedAt: Date(),
                source: StoredCredential.sourceName(file.path),
                secret: keepBundle ? .pkcs12Password : .privateKey,
                certificateFile: "credentials/\(alias).\(tag).cert.pem",
                sha256: certificate.sha256,
                subject: certificate.subject,
                teamID: certificate.teamID,
                notBefore: certificate.notBefore,
                notAfter: certificate.notAfter
            )
            if keepBundle { credential.bundleFile = "credentials/\(alias).\(tag).p12" }
            // Journaled first: what this import creates, and what it takes the place of.
            var journal = StoreJournal(
                files: Self.fileNames(credential),
                secrets: [credential.secretItem(store: self.path)]
            )
            if let replaced { journal.add(self.discarding(replaced)) }
            if let pending { journal.secrets += self.withLegacy(pending.secretItem(store: self.path)) }
            try await self.journal(journal)
            // Files first (unreferenced until the index names them), then the secret, then the index.
            let chainPEM = ([certificate] + file.chain).map { PEMWriter.certificate($0.der) }.joined()
            try await self.writeFile(Data(chainPEM.utf8), to: credential.certificateFile!)
            if let bundleFile = credential.bundleFile { try await self.writeFile(Data(file.contents), to: bundleFile) }
            try await self.secrets.store(
                keepBundle ? file.password! : key,
                for: credential.secretItem(store: self.path)
            )
            if let replaced { index.credentials.removeAll { $0 == replaced } }
            index.credentials.append(credential)
            return ImportResult(credential: credential, replaced: replaced)
        } afterCommit: { result, settled in
            var result = result
            result.replacedCleanly = settled.failedSecrets.isEmpty
            return result
        }
    }

    /// `first`, then what `second` adds, in order.
    static func union<Value: Equatable>(_ first: [Value], _ second: [Value]) -> [Value] {
        first + second.filter { !first.contains($0) }
    }

    /// What a replaced or removed credential leaves to delete once the index no longer names it:
    /// its files inside the credentials folder (never a damaged entry's file elsewhere) and its secret.
    func discarding(_ old: StoredCredential) -> StoreJournal {
        let files = [old.certificateFile, old.bundleFile].compactMap { $0 }.filter(isInside)
        return StoreJournal(
            files: files.map { ($0 as NSString).lastPathComponent },
            secrets: withLegacy(old.secretItem(store: path))
        )
    }

    /// `item`, and the same item under the unresolved store path an earlier version recorded.
    func withLegacy(_ item: SecretItem) -> [SecretItem] {
        guard let givenPath else { return [item] }
        var legacy = item
        legacy.store = givenPath
        return [item, legacy]
    }

    /// A stored certificate for the same topics and environments as `certificate`.
    static func sameApp(as certificate: PushCertificate, in index: StoreIndex) -> StoredCredential? {
        index.credentials.first {
            $0.kind == .certificate && Set($0.topics) == Set(certificate.coveredTopics)
                && Set($0.environments) == Set(certificate.environments)
        }
    }

    /// Only push credentials belong in the store: a certificate with neither Apple's push
    /// extensions nor a push topic (a TLS server certificate, say) could never authenticate to APNs.
    static func refuseNonPush(_ file: CredentialFile) throws {
        let certificate = file.certificate
        guard !certificate.isPushCertificate else { return }
        let name = certificate.commonName.map { "\"\($0)\"" } ?? certificate.subject
        let issuer = certificate.issuerCommonName.map { "\"\($0)\"" } ?? certificate.issuer
        let what = certificate.isCertificateAuthority ? "a certificate authority's certificate" : "a certificate"
        throw CredentialError(
            .notAPushCertificate,
            path: file.path,
            "This is not an Apple push certificate: it is \(what) for \(name), issued by \(issuer), with none of Apple's push extensions and no push topic, so APNs would refuse it; nothing was imported.",
            hint:
                "Import the certificate made for the Apple Push Notification service in the Apple Developer portal (its common name begins with \"Apple Push Services\" or \"Apple Development IOS Push Services\")."
        )
    }

    /// Imports a token key: the private key into the Secret Service, metadata into the index.
    public func importTokenKey(
        _ key: ProviderKey,
        topics: [String],
        environments: [PushEnvironment],
        alias requested: String?,
        source: String?,
        replacing: String? = nil,
        force: Bool = false
    ) async throws -> ImportResult {
        try await withLock { index in
            // Importing a key again as its own replacement is how its metadata is redone.
            let stored = index.credentials.first(where: {
                $0.kind == .tokenKey && $0.keyID == key.keyID && $0.teamID == key.teamID && $0.alias != replacing
            })
            if let stored, replacing == nil {
                throw CredentialError(
                    .alreadyImported,
                    path: source,
                    "Token key \(key.keyID) is already in the store as \(stored.alias); nothing changed.",
                    hint:
                        "To have it take over another credential (a rotation to a key already rolled out), import it as that credential's replacement: it takes that alias and serves what both served. To change what \(stored.alias) serves, update it.",
                    alias: stored.alias
                )
            }
            let replaced = try self.replacement(named: replacing, in: index)
            // A rotation to a key already stored beside the old one (docs/store.md, "Rotation"):
            // one entry holds the key and serves what both served; the other alias is folded in.
            let merged = replaced == nil ? nil : stored
            // A rotation keeps serving what the replaced credential served unless told otherwise.
            let serves = TokenKeyCoverage(
                topics: topics.isEmpty
                    ? Self.union(replaced.map(TokenKeyCoverage.apps(of:)) ?? [], merged?.topics ?? []) : topics,
                environments: environments.isEmpty
                    ? Self.union(replaced?.environments ?? [], merged?.environments ?? []) : environments,
                teamID: key.teamID
            )
            if !force {
                for old in [replaced, merged].compactMap({ $0 }) {
                    try serves.refuseNarrower(replacing: old, path: source)
                }
            }
            var others = index
            others.credentials.removeAll { $0 == merged }
            let alias = try self.chooseAlias(
                requested,
                otherwise: "token-\(key.keyID)",
                in: others,
                replacing: replaced
            )
            let credential = StoredCredential(
                alias: alias,
                kind: .tokenKey,
                topics: serves.topics,
                environments: serves.environments,
                importedAt: Date(),
                source: source.map(StoredCredential.sourceName),
                secret: .tokenKey,
                teamID: key.teamID,
                keyID: key.keyID,
                publicKeyFingerprint: key.publicKeyFingerprint
            )
            // The same key under the same alias is one Secret Service item, which the index keeps
            // naming: settling leaves it alone.
            var journal = StoreJournal(secrets: [credential.secretItem(store: self.path)])
            for old in [replaced, merged].compactMap({ $0 }) { journal.add(self.discarding(old)) }
            try await self.journal(journal)
            try await self.secrets.store(key.pkcs8, for: credential.secretItem(store: self.path))
            index.credentials.removeAll { $0 == replaced || $0 == merged }
            index.credentials.append(credential)
            return ImportResult(credential: credential, replaced: replaced, merged: merged)
        } afterCommit: { result, settled in
            var result = result
            result.replacedCleanly = settled.failedSecrets.isEmpty
            return result
        }
    }
}
