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
    /// proxy libsecret made would then have no attributes either). All calls are sent before any answer
    /// is awaited; they share the call's deadline, and a run out of time throws as any call does.
    private func attributesOf(
        _ paths: [String],
        connection: OpaquePointer,
        what: String
    ) throws -> [[String: String]?] {
        let batch = ReplyBatch(count: paths.count)
        try call(what: what) { cancellable, error in
            let context = g_main_context_new()
            g_main_context_push_thread_default(context)
            defer {
                g_main_context_pop_thread_default(context)
                g_main_context_unref(context)
            }
            let replyType = g_variant_type_new("(v)")
            defer { g_variant_type_free(replyType) }
            for (index, path) in paths.enumerated() {
                var children: [OpaquePointer?] = [
                    g_variant_new_string("org.freedesktop.Secret.Item"), g_variant_new_string("Attributes"),
                ]
                let slot = Unmanaged.passRetained(ReplySlot(batch: batch, index: index)).toOpaque()
                g_dbus_connection_call(
                    connection,
                    "org.freedesktop.secrets",
                    path,
                    "org.freedesktop.DBus.Properties",
                    "Get",
                    g_variant_new_tuple(&children, 2),
                    replyType,
                    G_DBUS_CALL_FLAGS_NONE,
                    -1,
                    cancellable,
                    { source, result, data in
                        guard let data else { return }
                        let slot = Unmanaged<ReplySlot>.fromOpaque(data).takeRetainedValue()
                        var failure: UnsafeMutablePointer<GError>?
                        let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &failure)
                        slot.batch.finish(slot.index, reply: reply, failure: failure)
                    },
                    slot
                )
            }
            while batch.remaining > 0 { g_main_context_iteration(context, 1) }
            // Out of time: said as any call that ran out of time says it.
            error = batch.takeCancellation()
            return 1
        }
        return batch.attributes
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
    fileprivate static func attributes(inGetReply reply: OpaquePointer) -> [String: String]? {
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

/// The answers of calls sent together, filled in by their callbacks on the thread that waits.
private final class ReplyBatch {
    var attributes: [[String: String]?]
    var remaining: Int
    private var cancellation: UnsafeMutablePointer<GError>?

    init(count: Int) {
        attributes = Array(repeating: nil, count: count)
        remaining = count
    }

    func finish(_ index: Int, reply: OpaquePointer?, failure: UnsafeMutablePointer<GError>?) {
        remaining -= 1
        if let reply {
            attributes[index] = LibSecretStore.attributes(inGetReply: reply)
            g_variant_unref(reply)
        }
        guard let failure else { return }
        if cancellation == nil, failure.pointee.domain == g_io_error_quark(),
            failure.pointee.code == gint(G_IO_ERROR_CANCELLED.rawValue)
        {
            cancellation = failure
        } else {
            g_error_free(failure)
        }
    }

    /// The first cancellation an answer reported, handed over (the caller frees it).
    func takeCancellation() -> UnsafeMutablePointer<GError>? {
        defer { cancellation = nil }
        return cancellation
    }

    deinit {
        if let cancellation { g_error_free(cancellation) }
    }
}

private final class ReplySlot {
    let batch: ReplyBatch
    let index: Int

    init(batch: ReplyBatch, index: Int) {
        self.batch = batch
        self.index = index
    }
}
