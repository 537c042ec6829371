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

/// The system's secret store. Its calls are awaited: a store that waits (on D-Bus, a program,
/// a server) does so on ``BlockingPool`` or without a thread, never on its caller's.
public protocol SecretStore: Sendable {
    func store(_ secret: SecretBytes, for item: SecretItem) async throws
    func lookup(_ item: SecretItem) async throws -> SecretBytes?
    /// The secrets of many items at once, for a command that reads a whole store. An item left
    /// out of the answer was not read (missing, locked, or its read failed): ask for it alone,
    /// which answers or says why.
    func lookup(_ items: [SecretItem]) async throws -> [SecretItem: SecretBytes]
    /// Returns whether an item was removed.
    @discardableResult func remove(_ item: SecretItem) async throws -> Bool
    /// Throws, saying why, when the store cannot be used now.
    func checkAvailable() async throws
    /// Every item kept for the store folder `store` (to find secrets no index entry names).
    func items(store: String) async throws -> [SecretItem]
    /// Where an item is kept, as a clause for messages ("in the Secret Service (label …)").
    func placeOf(_ item: SecretItem) -> String
    /// A token key this store holds and never gives back (it signs inside, as Vault's Transit
    /// does): its provider tokens come from the store. Nil when the store keeps the key's bytes
    /// (``lookup(_:)`` gives them), or does not hold it.
    func remoteTokenKey(for item: SecretItem, keyID: String, teamID: String) async throws -> RemoteProviderKey?
}

extension SecretStore {
    /// Item by item, for a store that has no cheaper way; what fails is left out for the caller
    /// to ask again alone.
    public func lookup(_ items: [SecretItem]) async throws -> [SecretItem: SecretBytes] {
        var found: [SecretItem: SecretBytes] = [:]
        for item in Set(items) {
            if let secret = try? await lookup(item) { found[item] = secret }
        }
        return found
    }

    public func placeOf(_ item: SecretItem) -> String { "in the Secret Service (label \"\(item.label)\")" }

    public func remoteTokenKey(for item: SecretItem, keyID: String, teamID: String) async throws -> RemoteProviderKey? {
        nil
    }
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
        // The plain case in three round trips; anything else is asked below, which checks
        // readiness first and says what stands in the way.
        if let secret = directLookup(item) { return secret }
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

    // MARK: libsecret plumbing

    /// The project's own schema, built once with the non-variadic constructor.
    nonisolated(unsafe) static let schema: OpaquePointer? = {
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
        _ body: (OpaquePointer?, inout UnsafeMutablePointer<GError>?) -> gboolean
    ) throws {
        BlockingWork.check("The Secret Service's D-Bus call to \(what)")
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
            return CredentialError.secretStoreUnavailable(
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
            return CredentialError.secretStoreLocked(
                "The Secret Service refused to \(what): \(message).",
                hint: "Unlock the keyring and try again."
            )
        }
        return CredentialError.secretStoreUnavailable(
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
                throw CredentialError.invalidArgument(
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
                throw CredentialError.secretNotFound(
                    "The key kept in the Secret Service is not valid base64; it was changed outside apnsctl.",
                    hint: "Remove the credential and import it again."
                )
            }
            return SecretBytes([UInt8](data))
        }
    }
}
