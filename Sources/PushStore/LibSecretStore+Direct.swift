internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// One item's secret read over the process's own connection to the session bus
    /// (``SessionBusConnection``, no library loaded): a search for its attributes, then one
    /// `GetSecrets` in the process's own session (``SharedSession``, whose key exchange runs on a
    /// thread of its own meanwhile, or already ran). Two round trips, where the readiness checks
    /// and libsecret's lookup take fourteen (its service object alone costs seven: match rules,
    /// an activation check, a property fetch) and its libgcrypt key exchange more time than the
    /// TLS handshake that follows (docs/performance.md, "The cold probe").
    ///
    /// Answers only the plain case: the session bus is a Unix socket that takes EXTERNAL
    /// authentication, the Secret Service is running, exactly one item has the attributes, it
    /// is unlocked, and its secret is text that decodes. Anything else is nil, and the caller
    /// asks the way that checks readiness first and says what stands in the way. Nothing is
    /// started, unlocked or prompted for.
    func directLookup(_ item: SecretItem) -> SecretBytes? {
        SharedSession.shared.begin(store: self)
        guard let connection = try? SessionBusConnection.shared(timeout: timeout) else { return nil }
        var searched = item.attributes
        searched["xdg:schema"] = Self.schemaName
        let search = SessionBusConnection.Call(
            path: "/org/freedesktop/secrets",
            interface: "org.freedesktop.Secret.Service",
            member: "SearchItems",
            arguments: [.stringDictionary(searched)]
        )
        guard let replies = try? connection.call([search], deadline: Deadline(after: timeout)),
            let found = Self.searchResult(replies[0]),
            found.unlocked.count == 1, found.locked.isEmpty,
            let session = SharedSession.shared.session(store: self),
            let text = secrets(at: found.unlocked, in: session)[found.unlocked[0]]
        else { return nil }
        return try? decode(text, kind: item.kind)
    }

    /// A new session, opened with `OpenSession` alone on `connection`; nil when the service
    /// refused it or the connection failed.
    func openSession(on connection: SessionBusConnection) -> SharedSession.Opened? {
        guard let session = SecretServiceSession() else { return nil }
        let call = SessionBusConnection.Call(
            path: "/org/freedesktop/secrets",
            interface: "org.freedesktop.Secret.Service",
            member: "OpenSession",
            arguments: [.string(SecretServiceSession.algorithm), .variant(.bytes(session.publicValue))]
        )
        guard let replies = try? connection.call([call], deadline: Deadline(after: timeout)),
            replies[0].kind == .methodReturn, replies[0].body.count == 2,
            case .variant(.bytes(let peerValue)) = replies[0].body[0],
            case .objectPath(let path) = replies[0].body[1],
            session.accept(peerValue: peerValue)
        else { return nil }
        return SharedSession.Opened(path: path, session: session, connection: connection)
    }

    /// The secrets at `paths`, read with one `GetSecrets` call in `opened` (on the connection it
    /// was opened on) and decrypted: the text up to its first NUL, as libsecret's password lookup
    /// gives it. What is not "text/plain" or does not decrypt is left out, as is everything when
    /// the call fails (and the session is forgotten, should the service no longer know it).
    func secrets(at paths: [String], in opened: SharedSession.Opened) -> [String: [UInt8]] {
        let call = SessionBusConnection.Call(
            path: "/org/freedesktop/secrets",
            interface: "org.freedesktop.Secret.Service",
            member: "GetSecrets",
            arguments: [.array(element: "o", paths.map(DBusValue.objectPath)), .objectPath(opened.path)]
        )
        guard let replies = try? opened.connection.call([call], deadline: Deadline(after: timeout)),
            replies[0].kind == .methodReturn, replies[0].body.count == 1,
            case .array(element: "{o(oayays)}", let entries) = replies[0].body[0]
        else {
            SharedSession.shared.forget(opened)
            return [:]
        }
        var found: [String: [UInt8]] = [:]
        for entry in entries {
            guard case .dictEntry(.objectPath(let path), .structure(let secret)) = entry, secret.count == 4,
                case .bytes(let parameters) = secret[1], case .bytes(let value) = secret[2],
                case .string("text/plain") = secret[3],
                var plain = opened.session.decrypt(parameters: parameters, value: value)
            else { continue }
            found[path] = Array(plain.prefix { $0 != 0 })
            plain.withUnsafeMutableBufferPointer { buffer in for index in buffer.indices { buffer[index] = 0 } }
        }
        return found
    }

    /// Ends a session without waiting for an answer (none is asked for).
    static func close(_ opened: SharedSession.Opened) {
        let call = SessionBusConnection.Call(
            path: opened.path,
            interface: "org.freedesktop.Secret.Session",
            member: "Close",
            arguments: []
        )
        try? opened.connection.send([call], deadline: Deadline(after: 2))
    }

    /// The unlocked and the locked paths of a `SearchItems` answer; nil for an error or an
    /// answer of another shape.
    static func searchResult(_ reply: DBusMessage) -> (unlocked: [String], locked: [String])? {
        guard reply.kind == .methodReturn, reply.body.count == 2,
            case .array(element: "o", let unlocked) = reply.body[0],
            case .array(element: "o", let locked) = reply.body[1]
        else { return nil }
        return (unlocked.compactMap(\.stringValue), locked.compactMap(\.stringValue))
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
        /// A session belongs to the connection that opened it.
        let connection: SessionBusConnection
    }

    private let condition = NSCondition()
    private var opened: Opened?
    private var opening = false

    /// Starts opening the session on a thread of its own, unless it is open or being opened.
    func begin(store: LibSecretStore) {
        condition.lock()
        defer { condition.unlock() }
        guard opened == nil || opened?.connection.isBroken == true, !opening else { return }
        opening = true
        Thread.detachNewThread { self.open(store: store) }
    }

    /// The open session, waiting for one being opened, or opening it now; nil when the service
    /// refused it.
    func session(store: LibSecretStore) -> Opened? {
        condition.lock()
        while opening { condition.wait() }
        if let opened, !opened.connection.isBroken {
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
        if opened?.path == stale.path, opened?.connection === stale.connection { opened = nil }
    }

    @discardableResult
    private func open(store: LibSecretStore) -> Opened? {
        let result = (try? SessionBusConnection.shared(timeout: store.timeout)).flatMap { store.openSession(on: $0) }
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
