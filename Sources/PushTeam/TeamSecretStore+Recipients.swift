import CredentialFormats
import Crypto
import Foundation
import PushStore

/// What this clone encrypted each secret file to, kept in its own `.git` (never pushed), by the
/// SHA-256 of the file's bytes. An age file does not say whom it is encrypted to (X25519 stanzas
/// do not name their recipient), so this is how a clone knows it exactly for the files it wrote;
/// for the others, ``TeamStore/exposedCredentials(trusted:)`` judges from the history.
struct WrittenRecipients {
    var root: URL

    static let file = ".git/apnsctl-written.json"

    static func key(of ciphertext: [UInt8]) -> String {
        SHA256.hash(data: ciphertext).map { String(format: "%02x", $0) }.joined()
    }

    func load() -> [String: [String]] {
        guard let bytes = try? StoreFile.readIfPresent(root: root, relative: Self.file, kind: .storeRecord) else {
            return [:]
        }
        return (try? JSONDecoder().decode([String: [String]].self, from: Data(bytes))) ?? [:]
    }

    /// Records each of `ciphertexts` as encrypted to `recipients`; with `replacing`, the records
    /// kept before are dropped (every file was just written again). A record that cannot be
    /// written only makes the check judge from the history.
    func record(_ ciphertexts: [[UInt8]], to recipients: [String], replacing: Bool = false) {
        var records = replacing ? [:] : load()
        for ciphertext in ciphertexts { records[Self.key(of: ciphertext)] = recipients }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(records) else { return }
        try? PrivateFile.write([UInt8](data), to: root.appendingPathComponent(Self.file).path, overwrite: true)
    }
}
