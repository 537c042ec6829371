internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// A keyring item a search found: the schema's attributes it has, whether it is locked, and
    /// its secret when the search loaded it (an unlocked item's, and only text: the bytes up to
    /// the first NUL, as libsecret's password lookup gives them).
    struct FoundItem {
        var attributes: [String: String]
        var locked: Bool
        var text: [UInt8]?
    }

    /// Every item of the project's schema whose attributes include `attributes`, in every
    /// collection, locked ones too: one search of `service`, with the unlocked items' secrets
    /// loaded together when `loadingSecrets` (libsecret's one `GetSecrets` for them all).
    /// Nothing is unlocked, so nothing can prompt. The order is the search's: unlocked items,
    /// then locked ones.
    ///
    /// libsecret's asynchronous search, run to its end on a main context of this thread: it
    /// makes every found item's object at once, where `secret_service_search_sync` makes them
    /// one after the other, a round trip to the service each (docs/performance.md, "The Secret
    /// Service").
    func search(
        _ attributes: [String: String],
        in service: GObjectReference,
        loadingSecrets: Bool,
        what: String
    ) throws -> [FoundItem] {
        let flags = SecretSearchFlags(
            rawValue: SECRET_SEARCH_ALL.rawValue | (loadingSecrets ? SECRET_SEARCH_LOAD_SECRETS.rawValue : 0)
        )
        let outcome = SearchOutcome()
        try call(what: what) { cancellable, error in
            let context = g_main_context_new()
            g_main_context_push_thread_default(context)
            defer {
                g_main_context_pop_thread_default(context)
                g_main_context_unref(context)
            }
            withAttributes(attributes) { table in
                secret_service_search(
                    service.pointer,
                    Self.schema,
                    table,
                    flags,
                    cancellable,
                    { source, result, data in
                        guard let data else { return }
                        let outcome = Unmanaged<SearchOutcome>.fromOpaque(data).takeUnretainedValue()
                        outcome.list = secret_service_search_finish(source, result, &outcome.error)
                        outcome.finished = true
                    },
                    Unmanaged.passUnretained(outcome).toOpaque()
                )
                // The deadline's cancellable ends the search too: its callback then carries the error.
                while !outcome.finished { g_main_context_iteration(context, 1) }
            }
            error = outcome.error
            outcome.error = nil
            return 1
        }
        let list = outcome.list
        defer { g_list_free_full(list, g_object_unref) }
        var found: [FoundItem] = []
        var node = list
        while let current = node {
            if let item = current.pointee.data.map(OpaquePointer.init) {
                found.append(
                    FoundItem(
                        attributes: Self.attributes(of: item),
                        locked: secret_item_get_locked(item) != 0,
                        text: loadingSecrets ? Self.text(of: item) : nil
                    )
                )
            }
            node = current.pointee.next
        }
        return found
    }

    /// The schema's attributes the item has.
    static func attributes(of item: OpaquePointer) -> [String: String] {
        guard let table = secret_item_get_attributes(item) else { return [:] }
        defer { g_hash_table_unref(table) }
        var attributes: [String: String] = [:]
        for name in attributeNames {
            let value = name.withCString { g_hash_table_lookup(table, $0) }
            if let value { attributes[name] = String(cString: value.assumingMemoryBound(to: CChar.self)) }
        }
        return attributes
    }

    /// The item's loaded secret when it is text; nil when none was loaded or it is of another type.
    private static func text(of item: OpaquePointer) -> [UInt8]? {
        guard let value = secret_item_get_secret(item) else { return nil }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        return text(ofValue: value)
    }

    /// The secret when it is text (the bytes up to the first NUL); nil when it is of another type.
    static func text(ofValue value: OpaquePointer) -> [UInt8]? {
        guard let type = secret_value_get_content_type(value), String(cString: type) == "text/plain" else {
            return nil
        }
        var length: gsize = 0
        guard let bytes = secret_value_get(value, &length) else { return nil }
        let buffer = UnsafeRawBufferPointer(start: bytes, count: Int(length))
        return Array(buffer.prefix { $0 != 0 })
    }
}

/// What libsecret's search handed its callback, read by the thread that waits for it.
private final class SearchOutcome {
    var list: UnsafeMutablePointer<GList>?
    var error: UnsafeMutablePointer<GError>?
    var finished = false
}
