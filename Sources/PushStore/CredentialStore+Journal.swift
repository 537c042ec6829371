import CredentialFormats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a change of the store is about to create or discard, written before it touches anything.
///
/// Every change (import, rotation, removal, request) names in `.writing` the files, Secret
/// Service items and request files it may create or leave behind, then writes the index: that
/// rename is the one step at which the change happens. Settling afterwards (or, when the process
/// was killed, at the next command) deletes whatever the journal names and the index does not,
/// so an interrupted change is either complete or undone, never half there. Files no journal
/// names and the index does not name either are *unaccounted*: most often the sign of an
/// index.json restored from an older backup. They are reported and never deleted, since they
/// may be the only copy of a certificate.
struct StoreJournal: Codable, Equatable {
    /// A request file written outside the store, with the public key of the CSR it holds, so
    /// that only that CSR is ever deleted.
    struct RequestFile: Codable, Equatable {
        var path: String
        var publicKeyFingerprint: String
    }

    /// Names of files in credentials/.
    var files: [String] = []
    var secrets: [SecretItem] = []
    var requestFiles: [RequestFile] = []

    var isEmpty: Bool { files.isEmpty && secrets.isEmpty && requestFiles.isEmpty }

    mutating func add(_ other: StoreJournal) {
        for name in other.files where !files.contains(name) { files.append(name) }
        for item in other.secrets where !secrets.contains(item) { secrets.append(item) }
        for file in other.requestFiles where !requestFiles.contains(file) { requestFiles.append(file) }
    }
}

extension CredentialStore {
    static let journalName = ".writing"

    /// What settling did: for the report of the change that just committed.
    package struct Settled {
        var removedFiles: [String] = []
        var removedSecrets: [SecretItem] = []
        var failedSecrets: [SecretItem: CredentialError] = [:]
    }

    /// Adds to the journal what a change is about to create or discard, before it does so.
    func journal(_ entries: StoreJournal) async throws {
        var journal = await readJournal()
        journal.add(entries)
        try await writeFile(try ReportSchema.encoder().encode(journal), to: Self.journalName)
    }

    /// The journal left by the last change (empty without one). An older apnsctl wrote plain
    /// file names, one a line.
    func readJournal() async -> StoreJournal {
        let url = root.appendingPathComponent(Self.journalName)
        let read: [UInt8]??
        if let medium {
            read = try? await medium.read(Self.journalName)
        } else {
            read = try? InputFile.read(path: url.path, kind: .storeRecord)
        }
        guard let bytes = read ?? nil else { return StoreJournal() }
        let data = Data(bytes)
        if let journal = try? ReportSchema.decoder().decode(StoreJournal.self, from: data) { return journal }
        let text = String(decoding: data, as: UTF8.self)
        return StoreJournal(files: text.split(separator: "\n").map(String.init))
    }

    /// Finishes or undoes whatever the journal names, judged by `index` (the index on disk):
    /// journaled files, secrets and request files the index does not name go, and so do the
    /// temporary files of interrupted writes. Runs under the exclusive lock.
    @discardableResult
    func settle(_ index: StoreIndex, secretsUsable: Bool = true) async -> Settled {
        var settled = Settled()
        let journal = await readJournal()
        let named = Set(index.credentials.flatMap(Self.fileNames))
        for name in journal.files where !named.contains(name) && StoreFolder.isStoreMade(name) {
            if let medium {
                if (try? await medium.remove("credentials/\(name)")) == true {
                    settled.removedFiles.append("\(medium.name)/credentials/\(name)")
                }
                continue
            }
            let url = credentialsFolder.appendingPathComponent(name)
            if (try? FileManager.default.removeItem(at: url)) != nil { settled.removedFiles.append(url.path) }
        }
        if medium == nil { for folder in [root, credentialsFolder] { removeTemporaryFiles(in: folder) } }
        let pending = Set((index.requests ?? []).map(\.publicKeyFingerprint))
        for file in journal.requestFiles where !pending.contains(file.publicKeyFingerprint) {
            Self.removeRequestFile(file)
        }
        var remaining = StoreJournal()
        let referenced = Set(
            index.credentials.map { $0.secretItem(store: path) }
                + (index.requests ?? []).map { $0.secretItem(store: path) }
        )
        for item in journal.secrets where !referenced.contains(item) {
            guard secretsUsable else {
                remaining.secrets.append(item)
                continue
            }
            do {
                if try await secrets.remove(item) { settled.removedSecrets.append(item) }
            } catch {
                remaining.secrets.append(item)
                settled.failedSecrets[item] =
                    (error as? CredentialError)
                    ?? CredentialError(.secretStoreUnavailable, UserFacing.describe(error))
            }
        }
        let url = root.appendingPathComponent(Self.journalName)
        if remaining.isEmpty, let medium {
            if !journal.isEmpty { _ = try? await medium.remove(Self.journalName) }
        } else if remaining.isEmpty {
            try? FileManager.default.removeItem(at: url)
        } else if remaining != journal {
            // What the Secret Service could not remove now is retried by the next command.
            try? await writeFile(try ReportSchema.encoder().encode(remaining), to: Self.journalName)
        }
        return settled
    }

    /// Settles what an interrupted command left, for commands that only read (`list`, `check`):
    /// nothing happens unless there is something to settle and the lock can be had.
    public func settleInterruptedChanges() async {
        if let medium {
            // Only a writer may settle: a reader's token cannot (and need not) take the lock.
            guard (try? await medium.read(Self.journalName)) != nil else { return }
            _ = try? await medium.exclusive {
                guard let index = try? await readIndex() else { return }
                let usable = (try? await secrets.checkAvailable()) != nil
                await settle(index, secretsUsable: usable)
            }
            return
        }
        guard (try? folderState()) == .store else { return }
        let journalPresent = FileManager.default.fileExists(atPath: root.appendingPathComponent(Self.journalName).path)
        guard journalPresent || hasTemporaryFiles() else { return }
        _ = try? await StoreLock.withLock(root: root) {
            guard let index = try? await readIndex(),
                StorePaths.realPath(credentialsFolder.path) == paths.credentialsFolder
            else { return }
            let usable = (try? await secrets.checkAvailable()) != nil
            await settle(index, secretsUsable: usable)
        }
    }

    static func fileNames(_ credential: StoredCredential) -> [String] {
        [credential.certificateFile, credential.bundleFile].compactMap { $0 }.map { ($0 as NSString).lastPathComponent }
    }

    private func hasTemporaryFiles() -> Bool {
        [root, credentialsFolder].contains { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).contains(
                where: StoreFolder.isTemporary
            )
        }
    }

    /// `.NAME.UUID.tmp` files: what a write killed before its rename left. No write is under
    /// way while the exclusive lock is held, so every one of them is a leftover.
    private func removeTemporaryFiles(in folder: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where StoreFolder.isTemporary(name) {
            var status = stat()
            let path = folder.appendingPathComponent(name).path
            if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG { unlink(path) }
        }
    }

    /// Deletes a request file of a request that was never recorded: only when it still holds
    /// the CSR of the key that was discarded (the user may have replaced it since), and the
    /// temporary files of its write.
    static func removeRequestFile(_ file: StoreJournal.RequestFile) {
        if let request = try? CertificateRequest.read(path: file.path),
            request.publicKeyFingerprint == file.publicKeyFingerprint
        {
            unlink(file.path)
        }
        let folder = (file.path as NSString).deletingLastPathComponent
        let name = (file.path as NSString).lastPathComponent
        for leftover in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where leftover.hasPrefix(".\(name).") && leftover.hasSuffix(".tmp") {
            unlink(folder + "/" + leftover)
        }
    }

    /// Store-made regular files of credentials/ that `index` does not name.
    func unreferencedFiles(_ index: StoreIndex) async -> [String] {
        if let medium {
            let referenced = Set(index.credentials.flatMap(Self.fileNames))
            let names = (try? await medium.list("credentials")) ?? []
            return names.sorted().filter { !referenced.contains($0) && StoreFolder.isStoreMade($0) }
        }
        guard StorePaths.realPath(credentialsFolder.path) == paths.credentialsFolder else { return [] }
        let referenced = Set(index.credentials.flatMap(Self.fileNames))
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: credentialsFolder.path) else {
            return []
        }
        return names.sorted().filter { name in
            var status = stat()
            return !referenced.contains(name) && StoreFolder.isStoreMade(name)
                && lstat(credentialsFolder.appendingPathComponent(name).path, &status) == 0
                && status.st_mode & S_IFMT == S_IFREG
        }
    }

    /// Credential files of this store that its index does not name and no interrupted change
    /// explains: full paths, for a report. Never deleted by apnsctl.
    public func unaccountedFiles() async throws -> [String] {
        try await withSharedLock {
            let index = try await readIndex()
            let journaled = Set(await readJournal().files)
            return await unreferencedFiles(index).filter { !StoreFolder.isTemporary($0) && !journaled.contains($0) }.map
            {
                name in
                medium.map { "\($0.name)/credentials/\(name)" } ?? credentialsFolder.appendingPathComponent(name).path
            }
        }
    }
}
