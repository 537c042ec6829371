import Foundation
import NIOHTTP1

/// One version of a KV entry as read: its fields and its version number.
public struct KVEntry: Sendable, CustomStringConvertible {
    /// The entry's fields. apnsctl's entries hold strings only (binary as base64).
    public let data: [String: String]
    /// The version read.
    public let version: Int
    /// When this version was written.
    public let createdTime: String?

    /// Names the fields, never their values (they may be secrets).
    public var description: String { "version \(version): \(data.keys.sorted().joined(separator: ", "))" }
}

/// A KV entry's metadata: its versions and which is current.
public struct KVMetadata: Sendable {
    /// The latest version (0 for none).
    public let currentVersion: Int
    /// The oldest version still kept.
    public let oldestVersion: Int
    /// Each kept version, by number.
    public let versions: [Int: Version]
    /// The entry's custom metadata: what is not secret about it, readable with the metadata
    /// path's `read` alone (no access to the secret).
    public let customMetadata: [String: String]

    /// One version's state.
    public struct Version: Sendable {
        /// When it was written (RFC 3339).
        public let createdTime: String?
        /// When it was deleted (soft: `undelete` brings it back), nil if it is not.
        public let deletionTime: String?
        /// Destroyed for good.
        public let destroyed: Bool
    }
}

/// The KV version 2 secrets engine at a mount (`secret` by default): versioned entries with
/// check-and-set writes. The mount is checked to be version 2 before its first use by a
/// client, because a version 1 mount would take `MOUNT/data/PATH` as a plain key.
public struct KVv2: Sendable {
    /// The client requests go through.
    public let client: VaultClient
    /// The mount's path, without slashes (`secret`).
    public let mount: String

    /// The engine at `mount`.
    public init(client: VaultClient, mount: String) {
        self.client = client
        self.mount = Self.trim(mount)
    }

    package static func trim(_ path: String) -> String { path.trimmingCharacters(in: CharacterSet(charactersIn: "/")) }

    var context: VaultClient.Context { VaultClient.Context(engine: .kv(mount)) }

    /// Checks that the mount is a KV secrets engine of version 2 (`sys/internal/ui/mounts/MOUNT`,
    /// which any token with a capability under the mount may read). Throws
    /// ``VaultError/Code/kvVersion1`` for a version 1 mount.
    public func checkVersion() async throws {
        if client.checkedMounts.withLockedValue({ $0.contains(mount) }) { return }
        let path = "sys/internal/ui/mounts/\(mount)"
        let json = try await client.call(.GET, path, capability: "read", context: context)
        let data = json["data"]
        guard data["type"].string == "kv" || data["type"].string == "generic" else {
            throw VaultError.rejected(
                address: client.address,
                path: path,
                status: 200,
                reason: "the engine at \(mount)/ is \(data["type"].string ?? "unknown"), not kv"
            )
        }
        guard data["options"]["version"].string == "2" else {
            throw VaultError.kvVersion1(address: client.address, mount: mount)
        }
        client.checkedMounts.withLockedValue { _ = $0.insert(mount) }
    }

    /// The version check, with a denial worded for the operation that needed it.
    private func checked(_ path: String, capability: String) async throws {
        do {
            try await checkVersion()
        } catch let error as VaultError where error.code == .permissionDenied {
            throw VaultError.permissionDenied(address: client.address, path: path, capability: capability)
        }
    }

    /// The latest version of the entry at `path` (`GET MOUNT/data/PATH`), or `version`.
    /// Throws ``VaultError/Code/notFound`` when there is none or it was deleted.
    public func read(_ path: String, version: Int? = nil) async throws -> KVEntry {
        let apiPath = "\(mount)/data/\(Self.trim(path))"
        try await checked(apiPath, capability: "read")
        let json = try await client.call(
            .GET,
            apiPath,
            query: version.map { "version=\($0)" },
            capability: "read",
            context: context
        )
        let data = json["data"]
        if data["data"].isNull { throw VaultError.notFound(address: client.address, path: apiPath) }
        return try entry(data, path: apiPath)
    }

    /// The entry a data path's answer holds.
    private func entry(_ data: VaultJSON, path apiPath: String) throws -> KVEntry {
        guard let fields = data["data"].object, let number = data["metadata"]["version"].int else {
            throw VaultError.badResponse(
                address: client.address,
                path: apiPath,
                reason: "no data.data or metadata.version"
            )
        }
        var strings: [String: String] = [:]
        for (key, value) in fields {
            guard let text = value.string else {
                throw VaultError.badResponse(
                    address: client.address,
                    path: apiPath,
                    reason: "the field \"\(key)\" is not a string"
                )
            }
            strings[key] = text
        }
        return KVEntry(data: strings, version: number, createdTime: data["metadata"]["created_time"].string)
    }

    /// The latest version of the entry at `path` as its data path tells it, which `read` alone
    /// may ask: the entry when that version is live, and its number either way (0 when there is
    /// no entry). A version deleted (`kv delete`, `delete_version_after`) or destroyed keeps its
    /// number, and a check-and-set write that replaces it must name that number.
    public func latest(_ path: String) async throws -> (entry: KVEntry?, version: Int) {
        let apiPath = "\(mount)/data/\(Self.trim(path))"
        try await checked(apiPath, capability: "read")
        let json: VaultJSON
        do {
            json = try await client.call(.GET, apiPath, capability: "read", context: context, answerOfNotFound: true)
        } catch let error as VaultError where error.code == .notFound {
            return (nil, 0)
        }
        let data = json["data"]
        guard let number = data["metadata"]["version"].int else {
            throw VaultError.badResponse(address: client.address, path: apiPath, reason: "no data.metadata.version")
        }
        if data["data"].isNull { return (nil, number) }
        return (try entry(data, path: apiPath), number)
    }

    /// ``read(_:version:)``, with nil for an entry that does not exist (or whose latest version
    /// was deleted).
    public func readIfPresent(_ path: String) async throws -> KVEntry? {
        do {
            return try await read(path)
        } catch let error as VaultError where error.code == .notFound {
            return nil
        }
    }

    /// Writes a new version of the entry at `path` (`POST MOUNT/data/PATH`) and returns its
    /// number. With `cas`, the write is made only if the latest version is `cas` (0: only if
    /// the entry does not exist), else it throws ``VaultError/Code/casMismatch``.
    @discardableResult
    public func write(_ path: String, data: [String: String], cas: Int? = nil) async throws -> Int {
        let apiPath = "\(mount)/data/\(Self.trim(path))"
        // A create-only write needs "create"; any other may replace a version ("update").
        let capability = cas == 0 ? "create" : "update"
        try await checked(apiPath, capability: capability)
        var body: [String: Any] = ["data": data]
        if let cas { body["options"] = ["cas": cas] }
        var context = self.context
        context.expectedVersion = cas
        let json = try await client.call(.POST, apiPath, body: body, capability: capability, context: context)
        guard let version = json["data"]["version"].int else {
            throw VaultError.badResponse(address: client.address, path: apiPath, reason: "no data.version")
        }
        return version
    }

    /// The entry's metadata (`GET MOUNT/metadata/PATH`).
    public func metadata(_ path: String) async throws -> KVMetadata {
        let apiPath = "\(mount)/metadata/\(Self.trim(path))"
        try await checked(apiPath, capability: "read")
        let data = try await client.call(.GET, apiPath, capability: "read", context: context)["data"]
        guard let current = data["current_version"].int else {
            throw VaultError.badResponse(address: client.address, path: apiPath, reason: "no data.current_version")
        }
        var versions: [Int: KVMetadata.Version] = [:]
        for (key, value) in data["versions"].object ?? [:] {
            guard let number = Int(key) else { continue }
            let deletion = value["deletion_time"].string
            versions[number] = KVMetadata.Version(
                createdTime: value["created_time"].string,
                deletionTime: deletion?.isEmpty == false ? deletion : nil,
                destroyed: value["destroyed"].bool ?? false
            )
        }
        let custom = (data["custom_metadata"].object ?? [:]).compactMapValues(\.string)
        return KVMetadata(
            currentVersion: current,
            oldestVersion: data["oldest_version"].int ?? 0,
            versions: versions,
            customMetadata: custom
        )
    }

    /// Replaces the entry's custom metadata (`POST MOUNT/metadata/PATH`), which a policy may let
    /// a reader of metadata see without the secret.
    public func writeCustomMetadata(_ path: String, _ fields: [String: String]) async throws {
        let apiPath = "\(mount)/metadata/\(Self.trim(path))"
        try await checked(apiPath, capability: "update")
        _ = try await client.call(
            .POST,
            apiPath,
            body: ["custom_metadata": fields],
            capability: "update",
            context: context
        )
    }

    /// The names under `path` (`LIST MOUNT/metadata/PATH`); folders end in `/`. Empty when there
    /// is nothing.
    public func list(_ path: String) async throws -> [String] {
        let apiPath = "\(mount)/metadata/\(Self.trim(path))"
        try await checked(apiPath, capability: "list")
        do {
            let json = try await client.call(
                HTTPMethod(rawValue: "LIST"),
                apiPath,
                capability: "list",
                context: context
            )
            return json["data"]["keys"].array?.compactMap(\.string) ?? []
        } catch let error as VaultError where error.code == .notFound {
            return []
        }
    }

    /// Deletes the latest version (soft: its metadata stays, and it can be undeleted):
    /// `DELETE MOUNT/data/PATH`.
    public func delete(_ path: String) async throws {
        let apiPath = "\(mount)/data/\(Self.trim(path))"
        try await checked(apiPath, capability: "delete")
        _ = try await client.call(.DELETE, apiPath, capability: "delete", context: context)
    }

    /// Destroys `versions` for good (`POST MOUNT/destroy/PATH`).
    public func destroy(_ path: String, versions: [Int]) async throws {
        let apiPath = "\(mount)/destroy/\(Self.trim(path))"
        try await checked(apiPath, capability: "update")
        _ = try await client.call(.POST, apiPath, body: ["versions": versions], capability: "update", context: context)
    }

    /// Removes the entry with all its versions and metadata (`DELETE MOUNT/metadata/PATH`).
    public func destroyAll(_ path: String) async throws {
        let apiPath = "\(mount)/metadata/\(Self.trim(path))"
        try await checked(apiPath, capability: "delete")
        _ = try await client.call(.DELETE, apiPath, capability: "delete", context: context)
    }
}

extension VaultClient {
    /// The KV version 2 engine at `mount`.
    public func kv(mount: String = "secret") -> KVv2 { KVv2(client: self, mount: mount) }
}
