import CredentialFormats
import Foundation

/// Copies the credentials of one store into another: a team moving from its git store to
/// Vault, a laptop's keyring store onto a server's. Nothing is fetched from Apple again, and
/// nothing secret touches a file: each credential is read from the source with its secret and
/// imported into the target in memory, under the same alias.
///
/// ```swift
/// let report = try await StoreCopy(from: teamStore, to: vaultStore).run()
/// ```
public struct StoreCopy: Sendable {
    public var source: CredentialStore
    public var target: CredentialStore
    /// Remove each token key from the source once the target holds it and never gives it back
    /// (Vault's Transit): the key then exists in one place only. Off unless asked.
    public var removeMovedTokenKeys: Bool

    public init(from source: CredentialStore, to target: CredentialStore, removeMovedTokenKeys: Bool = false) {
        self.source = source
        self.target = target
        self.removeMovedTokenKeys = removeMovedTokenKeys
    }

    /// What became of one credential.
    public enum Outcome: Sendable, Equatable {
        /// Imported into the target; `removedFromSource` when its key was then removed there.
        case copied(removedFromSource: Bool)
        /// The target held it already (the same certificate, or the same key ID): a copy run again.
        case alreadyThere(as: String)
        /// Left where it is, for the reason given.
        case skipped(String)
        /// Could not be copied: the error says why, and the target holds nothing of it.
        case failed(CredentialError)
    }

    public struct Entry: Sendable {
        public var credential: StoredCredential
        public var outcome: Outcome
    }

    public struct Report: Sendable {
        public var source: String
        public var target: String
        public var entries: [Entry]
        public var failed: Bool { entries.contains { if case .failed = $0.outcome { true } else { false } } }
    }

    /// Copies every credential of the source's index; a failure of one does not stop the others.
    /// Throws only when the source cannot be listed.
    public func run() async throws -> Report {
        let credentials = try await source.list()
        var entries: [Entry] = []
        for credential in credentials {
            entries.append(Entry(credential: credential, outcome: await copy(credential)))
        }
        return Report(source: source.path, target: target.path, entries: entries)
    }

    func copy(_ credential: StoredCredential) async -> Outcome {
        do {
            if let existing = try await alreadyThere(credential) { return .alreadyThere(as: existing.alias) }
            switch credential.kind {
            case .certificate:
                let identity = try await source.identity(of: credential)
                _ = try await target.importCertificate(identity, alias: credential.alias, force: true)
                return .copied(removedFromSource: false)
            case .tokenKey:
                if try await source.remoteTokenKey(of: credential) != nil {
                    return .skipped(
                        "its key signs inside the source store and never leaves it; give the target's hosts access to the source instead"
                    )
                }
                let key = try await source.tokenKey(of: credential)
                _ = try await target.importTokenKey(
                    key,
                    topics: credential.topics,
                    environments: credential.environments,
                    alias: credential.alias,
                    source: credential.source,
                    force: true
                )
                guard removeMovedTokenKeys, try await target.remoteTokenKey(of: try await current(credential)) != nil
                else {
                    return .copied(removedFromSource: false)
                }
                _ = try await source.remove(alias: credential.alias)
                return .copied(removedFromSource: true)
            }
        } catch let error as CredentialError {
            return .failed(error)
        } catch {
            return .failed(CredentialError(.storeError, UserFacing.describe(error), hint: nil, alias: credential.alias))
        }
    }

    /// The target's credential that is this one (the same certificate, or the same key).
    private func alreadyThere(_ credential: StoredCredential) async throws -> StoredCredential? {
        try await target.list().first { stored in
            switch credential.kind {
            case .certificate: return stored.sha256 != nil && stored.sha256 == credential.sha256
            case .tokenKey:
                return stored.kind == .tokenKey && stored.keyID == credential.keyID
                    && stored.teamID == credential.teamID
            }
        }
    }

    /// The target's entry for `credential`'s alias, as just imported.
    private func current(_ credential: StoredCredential) async throws -> StoredCredential {
        guard let stored = try await target.credential(named: credential.alias) else {
            throw CredentialError.aliasNotFound(
                credential.alias,
                "\(credential.alias) is not in the store at \(target.path) after its copy.",
                hint: nil
            )
        }
        return stored
    }
}
