internal import CLibSecret
import CredentialFormats
import Foundation

/// Where a credential's secret (a PKCS#12 password or a private key) lives.
///
/// The attributes are chosen so that a person can find the item with `secret-tool`:
///
///     secret-tool lookup application apnsctl store STORE_PATH alias ALIAS
public struct SecretItem: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// The password of a PKCS#12 bundle kept in the store folder.
        case pkcs12Password = "pkcs12-password"
        /// A certificate's private key (PKCS#8 DER, base64) when the bundle had no password.
        case privateKey = "private-key"
        /// A token-authentication key (PKCS#8 DER of the P-256 key, base64).
        case tokenKey = "token-key"
        /// A team member's age identity, the `AGE-SECRET-KEY-1…` line as age reads it (text).
        case teamIdentity = "team-identity"
        /// A team member's signing key, an OpenSSH private key file as `ssh-keygen -Y sign` reads it (text).
        case signingKey = "signing-key"
    }

    public var store: String
    public var alias: String
    public var kind: Kind
    /// SHA-256 of the certificate (hex, no colons) or the token key's key ID.
    public var identifier: String

    public init(store: String, alias: String, kind: Kind, identifier: String) {
        self.store = store
        self.alias = alias
        self.kind = kind
        self.identifier = identifier
    }

    public var label: String { "apnsctl: \(alias)" }

    var attributes: [String: String] {
        var attributes = ["application": "apnsctl", "store": store, "alias": alias, "kind": kind.rawValue]
        attributes[kind == .tokenKey ? "key-id" : "fingerprint"] = identifier
        return attributes
    }
}

/// The system's secret store.
public protocol SecretStore: Sendable {
    func store(_ secret: SecretBytes, for item: SecretItem) throws
    func lookup(_ item: SecretItem) throws -> SecretBytes?
    /// The secrets of many items at once, for a command that reads a whole store. An item left
    /// out of the answer was not read (missing, locked, or its read failed): ask for it alone,
    /// which answers or says why.
    func lookup(_ items: [SecretItem]) throws -> [SecretItem: SecretBytes]
    /// Returns whether an item was removed.
    @discardableResult func remove(_ item: SecretItem) throws -> Bool
    /// Throws, saying why, when the store cannot be used now.
    func checkAvailable() throws
    /// Every item kept for the store folder `store` (to find secrets no index entry names).
    func items(store: String) throws -> [SecretItem]
    /// Where an item is kept, as a clause for messages ("in the Secret Service (label …)").
    func placeOf(_ item: SecretItem) -> String
}

extension SecretStore {
    /// Item by item, for a store that has no cheaper way; what fails is left out for the caller
    /// to ask again alone.
    public func lookup(_ items: [SecretItem]) throws -> [SecretItem: SecretBytes] {
        var found: [SecretItem: SecretBytes] = [:]
        for item in Set(items) {
            if let secret = try? lookup(item) { found[item] = secret }
        }
        return found
    }

    public func placeOf(_ item: SecretItem) -> String { "in the Secret Service (label \"\(item.label)\")" }
}

/// The freedesktop.org Secret Service (gnome-keyring, KeePassXC...) through libsecret.
///
/// Every call has a deadline and checks first that the default collection exists and is
/// unlocked, so a non-interactive run fails with a clear message instead of waiting on an
/// unlock prompt nobody can answer.
public struct LibSecretStore: SecretStore {
    public static let schemaName = "dev.apnsctl.Credential"
    public var timeout: TimeInterval

    public init(timeout: TimeInterval = 10) { self.timeout = timeout }

    public func store(_ secret: SecretBytes, for item: SecretItem) throws {
        try ensureReady()
        let text = try encode(secret, kind: item.kind)
        try call(what: "store the secret") { cancellable, error in
            withAttributes(item.attributes) { attributes in
                text.withCString { value in
                    secret_password_storev_sync(Self.schema, attributes, nil, item.label, value, cancellable, &error)
                }
            }
        }
    }

    public func lookup(_ item: SecretItem) throws -> SecretBytes? {
        try ensureReady()
        var found: UnsafeMutablePointer<gchar>?
        try call(what: "read the secret") { cancellable, error in
            found = withAttributes(item.attributes) { attributes in
                secret_password_lookupv_sync(Self.schema, attributes, cancellable, &error)
            }
            return 1
        }
        guard let found else { return nil }
        defer { secret_password_free(found) }
        let length = strlen(found)
        let text = [UInt8](
            UnsafeBufferPointer(start: UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self), count: length)
        )
        return try decode(text, kind: item.kind)
    }

    @discardableResult
    public func remove(_ item: SecretItem) throws -> Bool {
        try ensureReady()
        var removed = false
        try call(what: "remove the secret") { cancellable, error in
            let result = withAttributes(item.attributes) { attributes in
                secret_password_clearv_sync(Self.schema, attributes, cancellable, &error)
            }
            removed = result != 0
            return 1
        }
        return removed
    }

    // MARK: Readiness

    public func checkAvailable() throws { try ensureReady() }

    /// Says which of "no session bus", "no provider", "no default collection" or "locked"
    /// stands in the way, before anything could trigger a prompt.
    public func ensureReady() throws {
        let environment = ProcessInfo.processInfo.environment
        let runtimeBus = environment["XDG_RUNTIME_DIR"].map { "\($0)/bus" }
        if (environment["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty,
            runtimeBus.map({ !FileManager.default.fileExists(atPath: $0) }) ?? true
        {
            throw Self.unavailable(
                "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set).",
                hint:
                    "Run inside a desktop session, or start one: `dbus-run-session -- bash`, then unlock a keyring with "
                    + "`echo -n PASSWORD | gnome-keyring-daemon --unlock --components=secrets`."
            )
        }
        let connection = try probeBus()
        // The default collection and its lock state asked with plain D-Bus calls on the kept
        // connection: libsecret's service and collection objects would each cost a proxy (a
        // property fetch, match rules, an activation check), and the lookup that follows makes
        // its own service object anyway (docs/performance.md, "The cold probe").
        var aliased: OpaquePointer?
        let replyType = g_variant_type_new("(o)")
        defer { g_variant_type_free(replyType) }
        try call(what: "open the default collection") { cancellable, error in
            var children: [OpaquePointer?] = [g_variant_new_string("default")]
            aliased = g_dbus_connection_call_sync(
                connection,
                "org.freedesktop.secrets",
                "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service",
                "ReadAlias",
                g_variant_new_tuple(&children, 1),
                replyType,
                G_DBUS_CALL_FLAGS_NONE,
                -1,
                cancellable,
                &error
            )
            return aliased == nil ? 0 : 1
        }
        var path = "/"
        if let aliased {
            defer { g_variant_unref(aliased) }
            let child = g_variant_get_child_value(aliased, 0)
            defer { g_variant_unref(child) }
            path = String(cString: g_variant_get_string(child, nil))
        }
        guard path != "/" else {
            throw CredentialError(
                .secretStoreUnavailable,
                path: nil,
                "The Secret Service has no default collection (keyring) to store secrets in.",
                hint:
                    "Create one: in GNOME, open Passwords and Keys (seahorse) and add a keyring, or start gnome-keyring-daemon with --unlock to create the login keyring."
            )
        }
        var lockedReply: OpaquePointer?
        let variantType = g_variant_type_new("(v)")
        defer { g_variant_type_free(variantType) }
        try call(what: "open the default collection") { cancellable, error in
            var children: [OpaquePointer?] = [
                g_variant_new_string("org.freedesktop.Secret.Collection"), g_variant_new_string("Locked"),
            ]
            lockedReply = g_dbus_connection_call_sync(
                connection,
                "org.freedesktop.secrets",
                path,
                "org.freedesktop.DBus.Properties",
                "Get",
                g_variant_new_tuple(&children, 2),
                variantType,
                G_DBUS_CALL_FLAGS_NONE,
                -1,
                cancellable,
                &error
            )
            return lockedReply == nil ? 0 : 1
        }
        var locked = true
        if let lockedReply {
            defer { g_variant_unref(lockedReply) }
            let boxed = g_variant_get_child_value(lockedReply, 0)
            defer { g_variant_unref(boxed) }
            let value = g_variant_get_variant(boxed)
            defer { g_variant_unref(value) }
            locked = g_variant_classify(value) != G_VARIANT_CLASS_BOOLEAN || g_variant_get_boolean(value) != 0
        }
        if locked {
            throw CredentialError(
                .secretStoreLocked,
                path: nil,
                "The Secret Service's default collection (keyring) is locked, and apnsctl does not wait on an unlock prompt.",
                hint:
                    "Unlock it first (log in to the desktop session, or `echo -n PASSWORD | gnome-keyring-daemon --unlock --replace`)."
            )
        }
    }

    /// Asks the bus itself, with a short timeout, whether anything owns or can start
    /// org.freedesktop.secrets: libsecret would otherwise wait out D-Bus's 25-second default.
    private func probeBus() throws -> OpaquePointer {
        var error: UnsafeMutablePointer<GError>?
        // Connecting includes D-Bus authentication, which a broken bus may never answer.
        let cancellable = g_cancellable_new()
        defer { g_object_unref(UnsafeMutableRawPointer(cancellable)) }
        let timer = DispatchWorkItem { g_cancellable_cancel(cancellable) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        defer { timer.cancel() }
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, cancellable, &error) else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            if let error { g_error_free(error) }
            throw Self.unavailable(
                "the D-Bus session bus does not answer (\(message)).",
                hint: "Check DBUS_SESSION_BUS_ADDRESS, or start a session with `dbus-run-session -- bash`."
            )
        }
        // Kept for the life of the process: GLib shares one session-bus connection per process
        // while anyone holds it, so libsecret's calls reuse this one instead of connecting and
        // authenticating again, a cost every command that reads a secret would pay (docs/performance.md).
        Self.keepBusConnection(connection)
        let name = "org.freedesktop.secrets"
        func ask(_ method: String, withName: Bool) -> OpaquePointer? {
            var parameters: OpaquePointer?
            if withName {
                var children: [OpaquePointer?] = [g_variant_new_string(name)]
                parameters = g_variant_new_tuple(&children, 1)
            }
            var callError: UnsafeMutablePointer<GError>?
            let reply = g_dbus_connection_call_sync(
                connection,
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                method,
                parameters,
                nil,
                G_DBUS_CALL_FLAGS_NONE,
                gint(timeout * 1000),
                nil,
                &callError
            )
            if let callError { g_error_free(callError) }
            return reply
        }
        guard let owned = ask("NameHasOwner", withName: true) else {
            throw Self.unavailable(
                "the D-Bus session bus did not answer within \(Int(timeout)) s.",
                hint: "Check that the session bus is running (DBUS_SESSION_BUS_ADDRESS)."
            )
        }
        defer { g_variant_unref(owned) }
        let ownedValue = g_variant_get_child_value(owned, 0)
        defer { g_variant_unref(ownedValue) }
        if g_variant_get_boolean(ownedValue) != 0 { return connection }
        // Not running: fine if the bus can start it on demand (a desktop's gnome-keyring).
        var activatable = false
        if let names = ask("ListActivatableNames", withName: false) {
            defer { g_variant_unref(names) }
            let list = g_variant_get_child_value(names, 0)
            defer { g_variant_unref(list) }
            var count: gsize = 0
            if let strings = g_variant_get_strv(list, &count) {
                defer { g_free(UnsafeMutableRawPointer(strings)) }
                activatable = (0..<Int(count)).contains { strings[$0].map { String(cString: $0) } == name }
            }
        }
        if !activatable {
            throw Self.unavailable(
                "no program provides the Secret Service (org.freedesktop.secrets) on this session bus.",
                hint:
                    "Start gnome-keyring (`gnome-keyring-daemon --start --components=secrets`) or enable KeePassXC's Secret Service integration."
            )
        }
        return connection
    }

    private static let heldConnectionLock = NSLock()
    nonisolated(unsafe) private static var heldConnection: UnsafeMutableRawPointer?

    private static func keepBusConnection(_ connection: OpaquePointer) {
        let alreadyHeld = heldConnectionLock.withLock {
            if heldConnection != nil { return true }
            heldConnection = UnsafeMutableRawPointer(connection)
            return false
        }
        if alreadyHeld { g_object_unref(UnsafeMutableRawPointer(connection)) }
    }

    static func unavailable(_ why: String, hint: String) -> CredentialError {
        CredentialError(.secretStoreUnavailable, path: nil, "The Secret Service cannot be reached: \(why)", hint: hint)
    }

    // MARK: libsecret plumbing

    /// The project's own schema, built once with the non-variadic constructor.
    nonisolated(unsafe) static let schema: UnsafeMutablePointer<SecretSchema> = {
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        for name in ["application", "store", "alias", "kind", "fingerprint", "key-id"] {
            // SECRET_SCHEMA_ATTRIBUTE_STRING is 0, stored as a NULL pointer value.
            g_hash_table_insert(types, UnsafeMutableRawPointer(g_strdup(name)), nil)
        }
        defer { g_hash_table_unref(types) }
        return secret_schema_newv(schemaName, SECRET_SCHEMA_NONE, types)
    }()

    func withAttributes<R>(_ attributes: [String: String], _ body: (OpaquePointer?) -> R) -> R {
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        for (key, value) in attributes {
            g_hash_table_insert(table, UnsafeMutableRawPointer(g_strdup(key)), UnsafeMutableRawPointer(g_strdup(value)))
        }
        defer { g_hash_table_unref(table) }
        return body(table)
    }

    /// Runs a blocking libsecret call with a cancellable that fires at the deadline, and turns
    /// a GError into a message that says what to do.
    func call(
        what: String,
        _ body: (UnsafeMutablePointer<GCancellable>?, inout UnsafeMutablePointer<GError>?) -> gboolean
    ) throws {
        let cancellable = g_cancellable_new()
        defer { g_object_unref(UnsafeMutableRawPointer(cancellable)) }
        let timer = DispatchWorkItem { g_cancellable_cancel(cancellable) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        defer { timer.cancel() }
        var error: UnsafeMutablePointer<GError>?
        _ = body(cancellable, &error)
        guard let error else { return }
        defer { g_error_free(error) }
        let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        throw classify(message: message, domain: error.pointee.domain, code: error.pointee.code, what: what)
    }

    private func classify(message: String, domain: GQuark, code: gint, what: String) -> CredentialError {
        if domain == g_io_error_quark(), code == gint(G_IO_ERROR_CANCELLED.rawValue) {
            return CredentialError(
                .secretStoreUnavailable,
                path: nil,
                "The Secret Service did not answer within \(Int(timeout)) s while trying to \(what).",
                hint: "Check that the keyring daemon is running and not waiting on a prompt; unlock it and try again."
            )
        }
        let lowered = message.lowercased()
        if lowered.contains("org.freedesktop.secrets") || lowered.contains("serviceunknown")
            || lowered.contains("was not provided by any")
        {
            return Self.unavailable(
                "no program provides the Secret Service (org.freedesktop.secrets) on this session bus.",
                hint:
                    "Start gnome-keyring (`gnome-keyring-daemon --start --components=secrets`) or enable KeePassXC's Secret Service integration."
            )
        }
        if lowered.contains("autolaunch") || lowered.contains("could not connect") || lowered.contains("no such file")
            || lowered.contains("connection refused")
        {
            return Self.unavailable(
                "the D-Bus session bus does not answer (\(message)).",
                hint: "Check DBUS_SESSION_BUS_ADDRESS, or start a session with `dbus-run-session -- bash`."
            )
        }
        if lowered.contains("locked") || lowered.contains("prompt") || lowered.contains("dismissed") {
            return CredentialError(
                .secretStoreLocked,
                path: nil,
                "The Secret Service refused to \(what): \(message).",
                hint: "Unlock the keyring and try again."
            )
        }
        return CredentialError(
            .secretStoreUnavailable,
            path: nil,
            "The Secret Service could not \(what): \(message).",
            hint: "Check the keyring daemon's state (`secret-tool search application apnsctl`)."
        )
    }

    // MARK: Encoding

    /// Passwords are stored as the text they are; binary keys as base64 so that the Secret
    /// Service's text API and `secret-tool` can carry them.
    private func encode(_ secret: SecretBytes, kind: SecretItem.Kind) throws -> String {
        switch kind {
        case .pkcs12Password, .teamIdentity, .signingKey:
            guard let text = String(bytes: secret.bytes, encoding: .utf8) else {
                throw CredentialError(
                    .invalidArgument,
                    path: nil,
                    "The password is not valid UTF-8 text and cannot be kept in the Secret Service.",
                    hint: "Export the bundle again with a text password."
                )
            }
            return text
        case .privateKey, .tokenKey:
            return Data(secret.bytes).base64EncodedString()
        }
    }

    func decode(_ text: [UInt8], kind: SecretItem.Kind) throws -> SecretBytes {
        switch kind {
        case .pkcs12Password, .teamIdentity, .signingKey:
            return SecretBytes(text)
        case .privateKey, .tokenKey:
            guard let data = Data(base64Encoded: Data(text)) else {
                throw CredentialError(
                    .secretNotFound,
                    path: nil,
                    "The key kept in the Secret Service is not valid base64; it was changed outside apnsctl.",
                    hint: "Remove the credential and import it again."
                )
            }
            return SecretBytes([UInt8](data))
        }
    }
}
