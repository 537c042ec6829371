internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// One item's secret read with plain D-Bus calls on the kept connection: a search for its
    /// attributes, then one `GetSecrets` in the process's own session (``SharedSession``, whose
    /// key exchange runs on a thread of its own meanwhile, or already ran). Two round trips, where
    /// the readiness checks and libsecret's lookup take fourteen (its service object alone costs
    /// seven: match rules, an activation check, a property fetch) and its libgcrypt key exchange
    /// more time than the TLS handshake that follows (docs/performance.md, "The cold probe").
    ///
    /// Answers only the plain case: the Secret Service is running, exactly one item has the
    /// attributes, it is unlocked, and its secret is text that decodes. Anything else is nil, and
    /// the caller asks the way that checks readiness first and says what stands in the way.
    /// Nothing is started, unlocked or prompted for.
    func directLookup(_ item: SecretItem) -> SecretBytes? {
        SharedSession.shared.begin(store: self)
        guard let connection = try? sessionBus() else { return nil }
        var searched = item.attributes
        searched["xdg:schema"] = Self.schemaName
        let search = MethodCall(
            method: "SearchItems",
            arguments: [Self.stringDictionary(searched)],
            replyType: "(aoao)"
        )
        guard let replies = try? callTogether([search], connection: connection, what: "read the secret") else {
            return nil
        }
        defer { for case let reply? in replies { g_variant_unref(reply) } }
        guard let reply = replies[0] else { return nil }
        let unlocked = Self.paths(in: reply, child: 0)
        guard unlocked.count == 1, Self.paths(in: reply, child: 1).isEmpty,
            let session = SharedSession.shared.session(store: self),
            let text = secrets(at: unlocked, in: session, connection: connection)[unlocked[0]]
        else { return nil }
        return try? decode(text, kind: item.kind)
    }

    /// A new session, opened with `OpenSession` alone; nil when the service refused it.
    func openSession(connection: OpaquePointer) -> SharedSession.Opened? {
        guard let session = SecretServiceSession(),
            let replies = try? callTogether(
                [Self.openSession(session)],
                connection: connection,
                what: "read the secret"
            )
        else { return nil }
        defer { for case let reply? in replies { g_variant_unref(reply) } }
        return replies[0].flatMap { Self.sessionPath(inReply: $0, session: session) }.map {
            SharedSession.Opened(path: $0, session: session)
        }
    }

    /// The secrets at `paths`, read with one `GetSecrets` call in `opened` and decrypted: the
    /// text up to its first NUL, as libsecret's password lookup gives it. What is not
    /// "text/plain" or does not decrypt is left out, as is everything when the call fails (and
    /// the session is forgotten, should the service no longer know it).
    func secrets(at paths: [String], in opened: SharedSession.Opened, connection: OpaquePointer) -> [String: [UInt8]] {
        let call = MethodCall(
            method: "GetSecrets",
            arguments: [Self.objectPaths(paths), g_variant_new_object_path(opened.path)],
            replyType: "(a{o(oayays)})"
        )
        guard let replies = try? callTogether([call], connection: connection, what: "read the store's secrets"),
            let reply = replies[0]
        else {
            SharedSession.shared.forget(opened)
            return [:]
        }
        defer { g_variant_unref(reply) }
        let table = g_variant_get_child_value(reply, 0)
        defer { g_variant_unref(table) }
        var found: [String: [UInt8]] = [:]
        for index in 0..<g_variant_n_children(table) {
            let entry = g_variant_get_child_value(table, index)
            let path = g_variant_get_child_value(entry, 0)
            let secret = g_variant_get_child_value(entry, 1)
            defer { for value in [entry, path, secret] { g_variant_unref(value) } }
            let parameters = Self.bytes(ofChild: 1, in: secret)
            let value = Self.bytes(ofChild: 2, in: secret)
            let contentType = g_variant_get_child_value(secret, 3)
            defer { g_variant_unref(contentType) }
            guard String(cString: g_variant_get_string(contentType, nil)) == "text/plain",
                var plain = opened.session.decrypt(parameters: parameters, value: value)
            else { continue }
            found[String(cString: g_variant_get_string(path, nil))] = Array(plain.prefix { $0 != 0 })
            plain.withUnsafeMutableBufferPointer { buffer in for index in buffer.indices { buffer[index] = 0 } }
        }
        return found
    }

    /// Ends a session without waiting for the answer.
    static func close(sessionPath: String, connection: OpaquePointer) {
        g_dbus_connection_call(
            connection,
            "org.freedesktop.secrets",
            sessionPath,
            "org.freedesktop.Secret.Session",
            "Close",
            nil,
            nil,
            G_DBUS_CALL_FLAGS_NO_AUTO_START,
            -1,
            nil,
            nil,
            nil
        )
    }

    // MARK: Messages

    private static func openSession(_ session: SecretServiceSession) -> MethodCall {
        MethodCall(
            method: "OpenSession",
            arguments: [
                g_variant_new_string(SecretServiceSession.algorithm),
                g_variant_new_variant(byteArray(session.publicValue)),
            ],
            replyType: "(vo)"
        )
    }

    /// The session's path from an `OpenSession` answer, once its key is derived from the
    /// service's public value; nil (and the session closed) when the value is unusable.
    private static func sessionPath(inReply reply: OpaquePointer, session: SecretServiceSession) -> String? {
        let boxed = g_variant_get_child_value(reply, 0)
        let pathValue = g_variant_get_child_value(reply, 1)
        defer {
            g_variant_unref(boxed)
            g_variant_unref(pathValue)
        }
        let path = String(cString: g_variant_get_string(pathValue, nil))
        let output = g_variant_get_variant(boxed)
        defer { g_variant_unref(output) }
        guard String(cString: g_variant_get_type_string(output)) == "ay",
            session.accept(peerValue: bytes(of: output))
        else { return nil }
        return path
    }

    /// The object paths of child `child` of a `SearchItems` answer: 0 the unlocked, 1 the locked.
    private static func paths(in reply: OpaquePointer, child: Int) -> [String] {
        let list = g_variant_get_child_value(reply, gsize(child))
        defer { g_variant_unref(list) }
        return (0..<g_variant_n_children(list)).map { index in
            let path = g_variant_get_child_value(list, index)
            defer { g_variant_unref(path) }
            return String(cString: g_variant_get_string(path, nil))
        }
    }

    private static func objectPaths(_ paths: [String]) -> OpaquePointer? {
        var children: [OpaquePointer?] = paths.map { g_variant_new_object_path($0) }
        let type = g_variant_type_new("o")
        defer { g_variant_type_free(type) }
        return g_variant_new_array(type, &children, gsize(children.count))
    }

    private static func byteArray(_ bytes: [UInt8]) -> OpaquePointer? {
        let type = g_variant_type_new("y")
        defer { g_variant_type_free(type) }
        return bytes.withUnsafeBytes { g_variant_new_fixed_array(type, $0.baseAddress, gsize(bytes.count), 1) }
    }

    private static func bytes(ofChild index: Int, in value: OpaquePointer?) -> [UInt8] {
        let child = g_variant_get_child_value(value, gsize(index))
        defer { g_variant_unref(child) }
        return bytes(of: child)
    }

    private static func bytes(of value: OpaquePointer?) -> [UInt8] {
        var count: gsize = 0
        guard let start = g_variant_get_fixed_array(value, &count, 1) else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: Int(count)))
    }
}

/// The process's own Secret Service session: opened once, ahead of need when a command knows it
/// will read a secret (``LibSecretStore/openSessionAhead()``), and kept for the life of the
/// process, as libsecret keeps its service object's session: one key exchange per process, not
/// one per read. A session the service no longer knows (it restarted) is forgotten, and the next
/// read opens another.
final class SharedSession: @unchecked Sendable {
    static let shared = SharedSession()

    struct Opened {
        let path: String
        let session: SecretServiceSession
    }

    private let condition = NSCondition()
    private var opened: Opened?
    private var opening = false

    /// Starts opening the session on a thread of its own, unless it is open or being opened.
    func begin(store: LibSecretStore) {
        condition.lock()
        defer { condition.unlock() }
        guard opened == nil, !opening else { return }
        opening = true
        Thread.detachNewThread { self.open(store: store) }
    }

    /// The open session, waiting for one being opened, or opening it now; nil when the service
    /// refused it.
    func session(store: LibSecretStore) -> Opened? {
        condition.lock()
        while opening { condition.wait() }
        if let opened {
            condition.unlock()
            return opened
        }
        opening = true
        condition.unlock()
        return open(store: store)
    }

    func forget(_ stale: Opened) {
        condition.lock()
        defer { condition.unlock() }
        if opened?.path == stale.path { opened = nil }
    }

    @discardableResult
    private func open(store: LibSecretStore) -> Opened? {
        let result = (try? store.sessionBus()).flatMap { store.openSession(connection: $0) }
        condition.lock()
        opened = result
        opening = false
        condition.broadcast()
        condition.unlock()
        return result
    }
}

extension LibSecretStore {
    /// Starts the process's Secret Service session (connection, key exchange) on a thread of its
    /// own, for a command that will read a secret and has other work to do first.
    public func openSessionAhead() { SharedSession.shared.begin(store: self) }
}

/// A method call to the Secret Service for ``LibSecretStore/callTogether(_:connection:what:)``:
/// its arguments are floating references, taken by the call.
struct MethodCall {
    var path = "/org/freedesktop/secrets"
    var interface = "org.freedesktop.Secret.Service"
    var method: String
    var arguments: [OpaquePointer?]
    var replyType: String
}

extension LibSecretStore {
    /// Sends every call on the kept connection before awaiting any answer, and awaits them
    /// together under one deadline: the answers in order, each a reference the caller releases,
    /// nil where a call failed. None starts the service. A run out of time throws as any call
    /// that ran out of time does.
    func callTogether(_ calls: [MethodCall], connection: OpaquePointer, what: String) throws -> [OpaquePointer?] {
        let batch = ReplyBatch(count: calls.count)
        try call(what: what) { cancellable, error in
            let context = g_main_context_new()
            g_main_context_push_thread_default(context)
            defer {
                g_main_context_pop_thread_default(context)
                g_main_context_unref(context)
            }
            for (index, call) in calls.enumerated() {
                var arguments = call.arguments
                let replyType = g_variant_type_new(call.replyType)
                defer { g_variant_type_free(replyType) }
                let slot = Unmanaged.passRetained(ReplySlot(batch: batch, index: index)).toOpaque()
                g_dbus_connection_call(
                    connection,
                    "org.freedesktop.secrets",
                    call.path,
                    call.interface,
                    call.method,
                    g_variant_new_tuple(&arguments, gsize(arguments.count)),
                    replyType,
                    G_DBUS_CALL_FLAGS_NO_AUTO_START,
                    -1,
                    cancellable,
                    { source, result, data in
                        guard let data else { return }
                        let slot = Unmanaged<ReplySlot>.fromOpaque(data).takeRetainedValue()
                        var failure: UnsafeMutablePointer<GError>?
                        let reply = g_dbus_connection_call_finish(source, result, &failure)
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
        return batch.takeReplies()
    }
}

/// The answers of calls sent together, filled in by their callbacks on the thread that waits.
private final class ReplyBatch {
    private var replies: [OpaquePointer?]
    var remaining: Int
    private var cancellation: UnsafeMutablePointer<GError>?

    init(count: Int) {
        replies = Array(repeating: nil, count: count)
        remaining = count
    }

    func finish(_ index: Int, reply: OpaquePointer?, failure: UnsafeMutablePointer<GError>?) {
        remaining -= 1
        replies[index] = reply
        guard let failure else { return }
        if cancellation == nil, failure.pointee.domain == g_io_error_quark(),
            failure.pointee.code == gint(G_IO_ERROR_CANCELLED.rawValue)
        {
            cancellation = failure
        } else {
            g_error_free(failure)
        }
    }

    /// The answers, handed over (the caller releases them).
    func takeReplies() -> [OpaquePointer?] {
        defer { replies = Array(repeating: nil, count: replies.count) }
        return replies
    }

    /// The first cancellation an answer reported, handed over (the caller frees it).
    func takeCancellation() -> UnsafeMutablePointer<GError>? {
        defer { cancellation = nil }
        return cancellation
    }

    deinit {
        for case let reply? in replies { g_variant_unref(reply) }
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
