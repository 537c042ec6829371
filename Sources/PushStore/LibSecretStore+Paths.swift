internal import CLibSecret
import Foundation

/// libsecret's path-level API (its `secret-paths.h`): items by their D-Bus object paths, with no
/// item object (a D-Bus proxy, several calls to make) per item. The batch read of a store's
/// secrets stands on it (docs/performance.md, "The Secret Service: libsecret alone").
extension LibSecretStore {
    /// The object paths of the unlocked and of the locked items one search found.
    struct FoundPaths {
        var unlocked: [String] = []
        var locked: [String] = []

        var all: [String] { unlocked + locked }
    }

    /// One search per attribute set, all sent at once (libsecret's asynchronous path search, one
    /// `SearchItems` each) and run to their end on a main context of this thread; the answers in
    /// the order of `queries`. Nothing is unlocked, so nothing can prompt. The first failure
    /// fails them all.
    func searchPaths(_ queries: [[String: String]], in service: GObjectReference, what: String) throws -> [FoundPaths] {
        let outcomes = queries.map { _ in PathSearchOutcome() }
        try call(what: what) { cancellable, error in
            let context = g_main_context_new()
            g_main_context_push_thread_default(context)
            defer {
                g_main_context_pop_thread_default(context)
                g_main_context_unref(context)
            }
            for (query, outcome) in zip(queries, outcomes) {
                withAttributes(query) { table in
                    secret_service_search_for_dbus_paths(
                        service.pointer,
                        Self.schema,
                        table,
                        cancellable,
                        { source, result, data in
                            guard let data else { return }
                            let outcome = Unmanaged<PathSearchOutcome>.fromOpaque(data).takeUnretainedValue()
                            var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
                            var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
                            _ = secret_service_search_for_dbus_paths_finish(
                                source,
                                result,
                                &unlocked,
                                &locked,
                                &outcome.error
                            )
                            outcome.found = FoundPaths(unlocked: strings(unlocked), locked: strings(locked))
                            g_strfreev(unlocked)
                            g_strfreev(locked)
                            outcome.finished = true
                        },
                        Unmanaged.passUnretained(outcome).toOpaque()
                    )
                }
            }
            // The deadline's cancellable ends every search too: its callback then carries the error.
            while outcomes.contains(where: { !$0.finished }) { g_main_context_iteration(context, 1) }
            for outcome in outcomes {
                guard let failure = outcome.error else { continue }
                if error == nil { error = failure } else { g_error_free(failure) }
                outcome.error = nil
            }
            return 1
        }
        return outcomes.map(\.found)
    }

    /// The text secrets of the unlocked items at `paths`, by path, read in one `GetSecrets`; an
    /// item whose secret is not text is left out.
    func texts(atPaths paths: [String], in service: GObjectReference, what: String) throws -> [String: [UInt8]] {
        guard !paths.isEmpty else { return [:] }
        let copies = paths.map { g_strdup($0) }
        defer { for copy in copies { g_free(copy) } }
        var array = copies.map { UnsafePointer($0) } + [nil]
        var table: OpaquePointer?
        try call(what: what) { cancellable, error in
            table = array.withUnsafeMutableBufferPointer {
                secret_service_get_secrets_for_dbus_paths_sync(service.pointer, $0.baseAddress, cancellable, &error)
            }
            return table == nil ? 0 : 1
        }
        guard let table else { return [:] }
        defer { g_hash_table_unref(table) }
        var texts: [String: [UInt8]] = [:]
        for path in paths {
            // The table owns its values.
            guard let value = path.withCString({ g_hash_table_lookup(table, $0) }) else { continue }
            if let text = Self.text(ofValue: OpaquePointer(value)) { texts[path] = text }
        }
        return texts
    }

    /// The schema's attributes of the item at each path, from its item object (made only for
    /// these, without its secret), in the order of `paths`.
    func attributes(atPaths paths: [String], in service: GObjectReference, what: String) throws -> [FoundItem] {
        var found: [FoundItem] = []
        for path in paths {
            try call(what: what) { cancellable, error in
                guard
                    let item = secret_item_new_for_dbus_path_sync(
                        service.pointer,
                        path,
                        SECRET_ITEM_NONE,
                        cancellable,
                        &error
                    )
                else { return 0 }
                defer { g_object_unref(UnsafeMutableRawPointer(item)) }
                found.append(
                    FoundItem(
                        attributes: Self.attributes(of: item),
                        locked: secret_item_get_locked(item) != 0,
                        text: nil
                    )
                )
                return 1
            }
        }
        return found
    }
}

/// The strings of a NULL-terminated array, none when there is no array.
private func strings(_ array: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
    guard let array else { return [] }
    var strings: [String] = []
    var index = 0
    while let string = array[index] {
        strings.append(String(cString: string))
        index += 1
    }
    return strings
}

/// What libsecret's path search handed its callback, read by the thread that waits for it.
private final class PathSearchOutcome {
    var found = LibSecretStore.FoundPaths()
    var error: UnsafeMutablePointer<GError>?
    var finished = false
}
