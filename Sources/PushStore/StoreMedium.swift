import CredentialFormats
import Foundation

/// Where a store keeps its index, its journal and its credentials' public files, when that is
/// not a folder on this machine: a secret manager's key-value engine (Vault or OpenBao's KV,
/// in PushVaultStore), or anything else that can read, write, remove and list small records by
/// name and give one writer at a time.
///
/// The store's use cases (import, rotation, removal, requests, settling an interrupted change)
/// are the same on every medium: ``CredentialStore`` journals what a change will create, writes
/// the files, then the index, and settles the journal against the index, whatever holds them.
/// The folder is the medium built into ``CredentialStore`` itself, because it has dangers no
/// other medium has (symbolic links out of the store, other users' folders, temporary files of
/// an interrupted rename, a git clone with nothing checked out) and guards against each.
///
/// Names are relative paths with `/` (`index.json`, `.writing`, `credentials/ALIAS.TAG.p12`).
/// A medium is used from a command's thread, never an event loop: its calls may wait.
public protocol StoreMedium: Sendable {
    /// How the store is named in messages, and in the records of its secrets (``SecretItem/store``):
    /// `vault:secret/apnsctl`, say.
    var name: String { get }
    /// Throws, saying why and what to do, when the medium cannot be used now (unreachable,
    /// refused, not set up). Called before a change, and before a read that finds nothing.
    func checkAvailable() async throws
    /// The record `relative`, or nil when there is none.
    func read(_ relative: String) async throws -> [UInt8]?
    /// Writes `bytes` as the record `relative`, over what is there. Within ``exclusive(_:)``.
    func write(_ bytes: [UInt8], to relative: String) async throws
    /// Writes the index, the one write at which a change happens: refused, with nothing
    /// changed, when another writer replaced the index since `exclusive` began.
    func writeIndex(_ bytes: [UInt8]) async throws
    /// Removes the record `relative`; whether there was one.
    @discardableResult func remove(_ relative: String) async throws -> Bool
    /// The names of the records directly under `folder` (`credentials`), without the folder.
    func list(_ folder: String) async throws -> [String]
    /// Runs `body` as the only writer of the store, waiting (a bounded time) for another to end.
    func exclusive<R>(_ body: () async throws -> R) async throws -> R
}

extension StoreMedium {
    /// Whether `relative` is a name this store makes for a credential's file: `credentials/NAME`,
    /// NAME one component. An index that names anything else was changed by hand, and is
    /// reported as damaged rather than obeyed.
    public static func isCredentialFile(_ relative: String) -> Bool {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0] == "credentials" && !parts[1].isEmpty && parts[1] != "."
            && parts[1] != ".." && !relative.contains("\0")
    }
}

extension CredentialStore {
    /// A store whose index and files are kept by `medium`, its secrets by `secrets`.
    public init(medium: any StoreMedium, secrets: any SecretStore) {
        self.init(root: URL(fileURLWithPath: "/"), secrets: secrets, medium: medium)
    }

    /// Reads a credential's file from the store, refusing a name outside its credentials.
    func readEntryFile(
        _ relative: String,
        of credential: StoredCredential
    ) async throws -> (bytes: [UInt8], name: String) {
        guard let medium else {
            let path = try entryFile(relative, of: credential)
            return (try CredentialFile.readBytes(path: path), path)
        }
        guard Self.isCredentialFile(relative, medium: medium) else {
            throw DamagedEntry(alias: credential.alias, path: relative, resolved: nil).error
        }
        guard let bytes = try await medium.read(relative) else {
            throw CredentialError(
                .storeError,
                path: "\(medium.name)/\(relative)",
                "The file \(relative) of \(credential.alias) is missing from the store \(medium.name).",
                hint: "Remove the credential from the store and import it again.",
                alias: credential.alias
            )
        }
        return (bytes, "\(medium.name)/\(relative)")
    }

    static func isCredentialFile(_ relative: String, medium: any StoreMedium) -> Bool {
        type(of: medium).isCredentialFile(relative)
    }

    /// Whether an index entry's file lies where the store keeps credentials' files.
    func isInside(_ relative: String) -> Bool {
        if let medium { return Self.isCredentialFile(relative, medium: medium) }
        return paths.resolve(relative).path != nil
    }
}
