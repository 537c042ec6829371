import Foundation

/// A JSON value as Vault sends it, read by path (`json["data"]["version"].int`). Immutable
/// Foundation values only, so sharing one is safe.
struct VaultJSON: @unchecked Sendable {
    let value: Any?

    init(_ value: Any?) { self.value = value }

    /// Parses `bytes`; nil when they are not JSON (an empty body is `null`).
    init?(parsing bytes: [UInt8]) {
        if bytes.isEmpty {
            value = nil
            return
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            return nil
        }
        value = parsed
    }

    subscript(key: String) -> VaultJSON { VaultJSON((value as? [String: Any])?[key]) }

    var string: String? { value as? String }
    var bool: Bool? { value as? Bool }
    var int: Int? {
        if let number = value as? Int { return number }
        if let text = value as? String { return Int(text) }
        return nil
    }
    var object: [String: VaultJSON]? { (value as? [String: Any])?.mapValues { VaultJSON($0) } }
    var array: [VaultJSON]? { (value as? [Any])?.map { VaultJSON($0) } }
    var isNull: Bool { value == nil || value is NSNull }

    /// Vault's `errors` array, joined.
    var errors: [String] { self["errors"].array?.compactMap(\.string) ?? [] }

    /// Encodes a request body.
    static func encode(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8))
    }
}
