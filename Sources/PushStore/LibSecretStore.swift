internal import CLibSecret
import CredentialFormats
import Foundation

/// The freedesktop.org Secret Service (gnome-keyring, KeePassXC...) through libsecret's
/// service API: one `SecretService` per process (libsecret keeps the one
/// `secret_service_get_sync` made, its session opened once), every read a search of it.
///
/// Every call has a deadline, and nothing is ever unlocked: a write checks first that the
/// default collection exists and is unlocked, and a read that finds only locked items says so,
/// so a non-interactive run fails with a clear message instead of waiting on an unlock prompt
/// nobody can answer.
public struct LibSecretStore: SecretStore {
    public static let schemaName = "dev.apnsctl.Credential"
    public var timeout: TimeInterval

    public init(timeout: TimeInterval = 10) { self.timeout = timeout }

    func storeNow(_ secret: SecretBytes, for item: SecretItem) throws {
        let service = try readyService()
        let text = try encode(secret, kind: item.kind)
        // libsecret copies the text into its own (non-swappable) memory.
        let value = text.withCString { secret_value_new($0, -1, "text/plain") }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        try call(what: "store the secret") { cancellable, error in
            withAttributes(item.attributes) { attributes in
                secret_service_store_sync(
                    service.pointer,
                    Self.schema,
                    attributes,
                    nil,
                    item.label,
                    value,
                    cancellable,
                    &error
                )
            }
        }
    }

    /// The item's secret, from the search of its attributes libsecret's own lookup makes, with
    /// its secret loaded and nothing unlocked: nil when no keyring item has the attributes;
    /// throws, saying why, when the only ones are locked or their secret is not one apnsctl wrote.
    func lookupNow(_ item: SecretItem) throws -> SecretBytes? {
        let service = try service()
        let found = try search(item.attributes, in: service, loadingSecrets: true, what: "read the secret")
        guard !found.isEmpty else { return nil }
        guard let readable = found.first(where: { !$0.locked }) else {
            throw CredentialError(
                .secretStoreLocked,
                "The Secret Service keeps the secret (label \"\(item.label)\") in a locked collection (keyring), and apnsctl does not wait on an unlock prompt.",
                hint: Self.unlockHint
            )
        }
        guard let text = readable.text else {
            throw CredentialError(
                .secretNotFound,
                "The Secret Service's item (label \"\(item.label)\") holds no text secret; it was changed outside apnsctl.",
                hint: "Remove the credential and import it again."
            )
        }
        return try decode(text, kind: item.kind)
    }

    func removeNow(_ item: SecretItem) throws -> Bool {
        let service = try readyService()
        var removed = false
        try call(what: "remove the secret") { cancellable, error in
            let result = withAttributes(item.attributes) { attributes in
                secret_service_clear_sync(service.pointer, Self.schema, attributes, cancellable, &error)
            }
            removed = result != 0
            return 1
        }
        return removed
    }

    static let unlockHint =
        "Unlock it first (log in to the desktop session, or `echo -n PASSWORD | gnome-keyring-daemon --unlock --replace`)."

    // MARK: libsecret plumbing

    /// The project's own schema, built once with the non-variadic constructor.
    nonisolated(unsafe) static let schema: OpaquePointer? = {
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        for name in attributeNames {
            // SECRET_SCHEMA_ATTRIBUTE_STRING is 0, stored as a NULL pointer value.
            g_hash_table_insert(types, UnsafeMutableRawPointer(g_strdup(name)), nil)
        }
        defer { g_hash_table_unref(types) }
        return secret_schema_newv(schemaName, SECRET_SCHEMA_NONE, types)
    }()

    /// Every attribute of the schema.
    static let attributeNames = ["application", "store", "alias", "kind", "fingerprint", "key-id"]

    func withAttributes<R>(_ attributes: [String: String], _ body: (OpaquePointer?) -> R) -> R {
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        for (key, value) in attributes {
            g_hash_table_insert(table, UnsafeMutableRawPointer(g_strdup(key)), UnsafeMutableRawPointer(g_strdup(value)))
        }
        defer { g_hash_table_unref(table) }
        return body(table)
    }

    /// Runs a blocking libsecret call with a cancellable that fires at the deadline, and turns
    /// a GError into a message that says what to do (``failure(_:what:)``).
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
        throw failure(error, what: what)
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
                    "The key kept in the Secret Service is not valid base64; it was changed outside apnsctl.",
                    hint: "Remove the credential and import it again."
                )
            }
            return SecretBytes([UInt8](data))
        }
    }
}

/// A GObject reference held for a scope: released when the value goes.
final class GObjectReference {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { g_object_unref(UnsafeMutableRawPointer(pointer)) }
}
