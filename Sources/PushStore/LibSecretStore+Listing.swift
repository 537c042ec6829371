internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// A keyring item a search found: its D-Bus path, whether it is locked, and its attributes
    /// (nil when the Secret Service did not give them).
    struct ListedItem {
        var path: String
        var locked: Bool
        var attributes: [String: String]?
    }

    /// Every item of the project's schema whose attributes include `attributes` (all
    /// collections, locked ones too), with each item's attributes: one `SearchItems` call, then
    /// every item's `Attributes` property asked for at once on the kept connection and the
    /// answers awaited together. libsecret's search makes a proxy object per item instead, five
    /// D-Bus messages and a round trip each (docs/performance.md, "check over a store").
    ///
    /// Nothing is unlocked and no secret is read. The order is the search's: unlocked items, then
    /// locked ones, as libsecret's search lists them.
    func listItems(
        matching attributes: [String: String],
        connection: OpaquePointer,
        what: String
    ) throws -> [ListedItem] {
        var found: OpaquePointer?
        let replyType = g_variant_type_new("(aoao)")
        defer { g_variant_type_free(replyType) }
        var searched = attributes
        // As libsecret's searches with the schema ask: only items stored under it.
        searched["xdg:schema"] = Self.schemaName
        try call(what: what) { cancellable, error in
            var children: [OpaquePointer?] = [Self.stringDictionary(searched)]
            found = g_dbus_connection_call_sync(
                connection,
                "org.freedesktop.secrets",
                "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service",
                "SearchItems",
                g_variant_new_tuple(&children, 1),
                replyType,
                G_DBUS_CALL_FLAGS_NONE,
                -1,
                cancellable,
                &error
            )
            return found == nil ? 0 : 1
        }
        guard let found else { return [] }
        defer { g_variant_unref(found) }
        var listed: [ListedItem] = []
        for (position, locked) in [(0, false), (1, true)] {
            let paths = g_variant_get_child_value(found, gsize(position))
            defer { g_variant_unref(paths) }
            for index in 0..<g_variant_n_children(paths) {
                let path = g_variant_get_child_value(paths, index)
                defer { g_variant_unref(path) }
                listed.append(ListedItem(path: String(cString: g_variant_get_string(path, nil)), locked: locked))
            }
        }
        guard !listed.isEmpty else { return [] }
        let attributes = try attributesOf(listed.map(\.path), connection: connection, what: what)
        for index in listed.indices { listed[index].attributes = attributes[index] }
        return listed
    }

    /// Each path's attributes (`Properties.Get(Item, Attributes)`), nil where the call failed (a
    /// proxy libsecret made would then have no attributes either). All calls are sent before any
    /// answer is awaited (``callTogether(_:connection:what:)``).
    private func attributesOf(
        _ paths: [String],
        connection: OpaquePointer,
        what: String
    ) throws -> [[String: String]?] {
        let calls = paths.map { path in
            MethodCall(
                path: path,
                interface: "org.freedesktop.DBus.Properties",
                method: "Get",
                arguments: [
                    g_variant_new_string("org.freedesktop.Secret.Item"), g_variant_new_string("Attributes"),
                ],
                replyType: "(v)"
            )
        }
        let replies = try callTogether(calls, connection: connection, what: what)
        defer { for case let reply? in replies { g_variant_unref(reply) } }
        return replies.map { reply in reply.flatMap { Self.attributes(inGetReply: $0) } }
    }

    /// `a{ss}` of `dictionary`, a floating reference.
    static func stringDictionary(_ dictionary: [String: String]) -> OpaquePointer? {
        var entries: [OpaquePointer?] = dictionary.map { key, value in
            g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_string(value))
        }
        let entryType = g_variant_type_new("{ss}")
        defer { g_variant_type_free(entryType) }
        return g_variant_new_array(entryType, &entries, gsize(entries.count))
    }

    /// The `a{ss}` inside a `(v)` reply; nil when it is something else.
    private static func attributes(inGetReply reply: OpaquePointer) -> [String: String]? {
        let boxed = g_variant_get_child_value(reply, 0)
        defer { g_variant_unref(boxed) }
        let value = g_variant_get_variant(boxed)
        defer { g_variant_unref(value) }
        guard String(cString: g_variant_get_type_string(value)) == "a{ss}" else { return nil }
        var attributes: [String: String] = [:]
        for index in 0..<g_variant_n_children(value) {
            let entry = g_variant_get_child_value(value, index)
            defer { g_variant_unref(entry) }
            let key = g_variant_get_child_value(entry, 0)
            let text = g_variant_get_child_value(entry, 1)
            defer {
                g_variant_unref(key)
                g_variant_unref(text)
            }
            attributes[String(cString: g_variant_get_string(key, nil))] = String(
                cString: g_variant_get_string(text, nil)
            )
        }
        return attributes
    }
}
