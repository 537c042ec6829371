internal import CLibSecret
import CredentialFormats
import Foundation

extension LibSecretStore {
    /// Every apnsctl item whose `store` attribute is `store`, found by its attributes without
    /// unlocking anything or reading a single secret.
    public func items(store: String) throws -> [SecretItem] {
        try ensureReady()
        var list: UnsafeMutablePointer<GList>?
        try call(what: "list the store's secrets") { cancellable, error in
            list = withAttributes(["application": "apnsctl", "store": store]) { attributes in
                secret_password_searchv_sync(Self.schema, attributes, SECRET_SEARCH_ALL, cancellable, &error)
            }
            return 1
        }
        defer { if let list { g_list_free_full(list, g_object_unref) } }
        var items: [SecretItem] = []
        var node = list
        while let current = node {
            node = current.pointee.next
            guard let table = secret_retrievable_get_attributes(OpaquePointer(current.pointee.data)) else { continue }
            defer { g_hash_table_unref(table) }
            func value(_ name: String) -> String? {
                name.withCString { key in
                    g_hash_table_lookup(table, key).map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
                }
            }
            // An item of a kind this version does not know is not this version's to judge.
            guard value("application") == "apnsctl", value("store") == store, let alias = value("alias"),
                let kind = value("kind").flatMap(SecretItem.Kind.init(rawValue:))
            else { continue }
            let identifier = value(kind == .tokenKey ? "key-id" : "fingerprint") ?? ""
            items.append(SecretItem(store: store, alias: alias, kind: kind, identifier: identifier))
        }
        return items
    }
}

extension SecretStore {
    /// A secret store that cannot list its items says so; orphaned secrets then go unreported.
    public func items(store: String) throws -> [SecretItem] {
        throw CredentialError.secretStoreUnavailable(
            "This secret store cannot list its items, so secrets left without an index entry cannot be found.",
            hint: nil
        )
    }
}
