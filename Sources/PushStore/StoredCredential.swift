import CredentialFormats
import Foundation

/// One credential in the store's index. Only public facts: secrets live in the Secret Service.
public struct StoredCredential: Codable, Sendable, Equatable {
    /// A certificate or a token key (declared with the loaded credential, which has one too).
    public typealias Kind = CredentialKind

    public var alias: String
    public var kind: Kind
    public var topics: [String]
    public var environments: [PushEnvironment]
    public var importedAt: Date
    /// Where the credential was imported from: see ``sourceName(_:)``.
    public var source: String?
    public var secret: SecretItem.Kind

    // Certificates
    /// The bundle as imported (PKCS#12 with a password), relative to the store folder.
    public var bundleFile: String?
    /// The public certificate chain (PEM), relative to the store folder: lets `list` and
    /// `check` work without touching the Secret Service.
    public var certificateFile: String?
    public var sha256: String?
    public var subject: String?
    public var teamID: String?
    public var notBefore: Date?
    public var notAfter: Date?

    // Token keys
    public var keyID: String?
    public var publicKeyFingerprint: String?

    // The index's keys (`team_id`, `key_id`) are the store's format: see ReportSchema for the
    // acronyms' raw values.
    enum CodingKeys: String, CodingKey {
        case alias, kind, topics, environments, importedAt, source, secret
        case bundleFile, certificateFile, sha256, subject
        case teamID = "teamId"
        case notBefore, notAfter
        case keyID = "keyId"
        case publicKeyFingerprint
    }

    /// The Secret Service item holding this credential's secret.
    public func secretItem(store: String) -> SecretItem {
        SecretItem(
            store: store,
            alias: alias,
            kind: secret,
            identifier: kind == .tokenKey
                ? (keyID ?? "") : (sha256 ?? "").replacingOccurrences(of: ":", with: "").lowercased()
        )
    }
}

/// The index file's shape.
package struct StoreIndex: Codable {
    var schemaVersion = 1
    package var credentials: [StoredCredential] = []
    /// Certificate signing requests waiting for their certificate (absent when there are none).
    package var requests: [PendingRequest]?

    package init() {}

    /// The index in `bytes`, as ``ReportSchema/decoder()`` reads it (the shape
    /// ``ReportSchema/encoder()`` writes); the decoder's error says what is wrong otherwise.
    package static func decoded(from bytes: [UInt8]) throws -> StoreIndex {
        try ReportSchema.decoder().decode(StoreIndex.self, from: Data(bytes))
    }
}

extension StoredCredential {
    /// What the index records of the path a credential was imported from: the file's name,
    /// without the folders above it, which tell where someone keeps files rather than what the
    /// file was. A path under /dev or /proc (`/dev/fd/63` from `<(command)`, `/dev/stdin`) has
    /// no name of its own, so it is recorded as given.
    public static func sourceName(_ path: String) -> String {
        if path.hasPrefix("/dev/") || path.hasPrefix("/proc/") { return path }
        return (path as NSString).lastPathComponent
    }
}

extension StoredCredential {
    /// The bundle IDs credentials are for, in the order first met.
    public static func apps(in stored: [StoredCredential]) -> [String] {
        var seen = Set<String>()
        return stored.flatMap(\.topics).map(TopicScope.app(of:)).filter { seen.insert($0).inserted }
    }
}
