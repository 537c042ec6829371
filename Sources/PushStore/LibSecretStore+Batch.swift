internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// The secrets of `items` read together: each item's path found by its attributes, as the
    /// one-item lookup finds it, then every secret in one `GetSecrets` call, where asking item by
    /// item costs a session and a `GetSecrets` round trip each (docs/performance.md, "check over
    /// a store"). No proxy object is made per item: libsecret's search with its secrets loaded
    /// makes one, at five D-Bus messages each.
    ///
    /// Throws only what ``ensureReady()`` throws, the answer a lookup of any one item would
    /// start with. Nothing is unlocked and no prompt can appear: an item that is locked, that two
    /// keyring items claim, whose secret is not text or cannot be decoded, and a missing one are
    /// left out, as is everything when a call fails; the caller asks for those alone, which
    /// answers or says why as the one-item lookup does.
    public func lookup(_ items: [SecretItem]) throws -> [SecretItem: SecretBytes] {
        guard !items.isEmpty else { return [:] }
        try ensureReady()
        var service: OpaquePointer?
        try? call(what: "open a session with the Secret Service") { cancellable, error in
            service = OpaquePointer(secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, cancellable, &error))
            return service == nil ? 0 : 1
        }
        guard let service else { return [:] }
        defer { g_object_unref(UnsafeMutableRawPointer(service)) }
        var paths: [String: SecretItem] = [:]
        for item in Set(items) {
            guard let path = onlyUnlockedPath(of: item, service: service) else { continue }
            paths[path] = item
        }
        return paths.isEmpty ? [:] : secrets(at: paths, service: service)
    }

    /// The item's path when exactly one keyring item has its attributes and it is unlocked.
    private func onlyUnlockedPath(of item: SecretItem, service: OpaquePointer) -> String? {
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        let searched: Void? = try? call(what: "find the secret") { cancellable, error in
            withAttributes(item.attributes) { attributes in
                secret_service_search_for_dbus_paths_sync(
                    UnsafeMutablePointer(service),
                    Self.schema,
                    attributes,
                    cancellable,
                    &unlocked,
                    &locked,
                    &error
                )
            }
        }
        defer {
            g_strfreev(unlocked)
            g_strfreev(locked)
        }
        guard searched != nil, Self.count(locked) == 0, Self.count(unlocked) == 1, let path = unlocked?[0] else {
            return nil
        }
        return String(cString: path)
    }

    private static func count(_ strings: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> Int {
        guard let strings else { return 0 }
        return Int(g_strv_length(strings))
    }

    /// One `GetSecrets` call for every path; what is not text (as the one-item lookup reads it)
    /// or does not decode is left out.
    private func secrets(at paths: [String: SecretItem], service: OpaquePointer) -> [SecretItem: SecretBytes] {
        var strings: [UnsafeMutablePointer<CChar>?] = paths.keys.map { strdup($0) }
        defer { for string in strings { free(string) } }
        strings.append(nil)
        var table: OpaquePointer?
        let read: Void? = strings.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<gchar>?.self, capacity: buffer.count) { list in
                try? call(what: "read the store's secrets") { cancellable, error in
                    table = secret_service_get_secrets_for_dbus_paths_sync(
                        UnsafeMutablePointer(service),
                        list,
                        cancellable,
                        &error
                    )
                    return table == nil ? 0 : 1
                }
            }
        }
        guard read != nil, let table else { return [:] }
        defer { g_hash_table_unref(table) }
        var found: [SecretItem: SecretBytes] = [:]
        for (path, item) in paths {
            let value = path.withCString { g_hash_table_lookup(table, $0) }
            // As the one-item lookup reads it: the text up to its first NUL; nothing if not text.
            guard let value, let characters = secret_value_get_text(OpaquePointer(value)) else { continue }
            let text = [UInt8](
                UnsafeBufferPointer(
                    start: UnsafeRawPointer(characters).assumingMemoryBound(to: UInt8.self),
                    count: strlen(characters)
                )
            )
            if let secret = try? decode(text, kind: item.kind) { found[item] = secret }
        }
        return found
    }
}
