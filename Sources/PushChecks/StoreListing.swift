import Foundation
import PushStore

/// What a store holds, as `list` shows it: its credentials (each with the damage of an entry
/// that names a file outside the store), pending certificate requests, and credential files no
/// entry names. Reads only the index and the folder; the Secret Service is not asked.
public struct StoreListing: Sendable {
    public struct Entry: Sendable {
        public var credential: StoredCredential
        /// Set when the entry names a file outside the store.
        public var damage: DamagedEntry?
    }

    public var entries: [Entry]
    public var pendingRequests: [PendingRequest]
    /// Credential files of the store that no index entry names (never deleted by apnsctl).
    public var unaccountedFiles: [String]

    public var damaged: [DamagedEntry] { entries.compactMap(\.damage) }

    /// A damaged entry or an unaccounted file: the store needs someone's attention.
    public var needsAttention: Bool { !damaged.isEmpty || !unaccountedFiles.isEmpty }

    public var isEmpty: Bool { entries.isEmpty && pendingRequests.isEmpty && unaccountedFiles.isEmpty }
}

extension CredentialStore {
    /// The store as `list` shows it, after what a command killed earlier left is completed or undone.
    public func listing() async throws -> StoreListing {
        await settleInterruptedChanges()
        let credentials = try await list()
        let requests = try await pendingRequests()
        return StoreListing(
            entries: credentials.map { StoreListing.Entry(credential: $0, damage: damage(of: $0)) },
            pendingRequests: requests,
            unaccountedFiles: (try? await unaccountedFiles()) ?? []
        )
    }

    /// Each app with a stored certificate, and the alias of its latest one: what `import
    /// --replace` names when a new certificate renews it. Sorted by app.
    public func renewals() async throws -> [(app: String, alias: String)] {
        Self.renewals(in: try await list())
    }

    static func renewals(in stored: [StoredCredential]) -> [(app: String, alias: String)] {
        var latest: [String: StoredCredential] = [:]
        for credential in stored where credential.kind == .certificate {
            guard let app = credential.topics.first else { continue }
            if let known = latest[app], (known.notAfter ?? .distantPast) >= (credential.notAfter ?? .distantPast) {
                continue
            }
            latest[app] = credential
        }
        return latest.keys.sorted().map { ($0, latest[$0]!.alias) }
    }
}
