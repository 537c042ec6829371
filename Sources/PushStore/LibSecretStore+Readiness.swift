internal import CLibSecret
import CredentialFormats
import Foundation

/// Whether the Secret Service can be used now, asked before anything could prompt: the session
/// bus, a provider of org.freedesktop.secrets, the default collection and its lock state.
extension LibSecretStore {

    public func checkAvailable() throws { try ensureReady() }

    /// Says which of "no session bus", "no provider", "no default collection" or "locked"
    /// stands in the way, before anything could trigger a prompt.
    public func ensureReady() throws { _ = try readyConnection() }

    /// ``ensureReady()``, giving the session-bus connection it asked on (kept for the life of the
    /// process) for plain D-Bus calls that follow.
    func readyConnection() throws -> OpaquePointer {
        BlockingWork.check("Asking D-Bus whether the Secret Service is ready")
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
            throw CredentialError.secretStoreUnavailable(
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
            throw CredentialError.secretStoreLocked(
                "The Secret Service's default collection (keyring) is locked, and apnsctl does not wait on an unlock prompt.",
                hint:
                    "Unlock it first (log in to the desktop session, or `echo -n PASSWORD | gnome-keyring-daemon --unlock --replace`)."
            )
        }
        return connection
    }

    /// The session bus's connection, connected (and authenticated) once and kept for the life of
    /// the process: GLib shares one session-bus connection per process while anyone holds it, so
    /// libsecret's calls reuse this one instead of connecting and authenticating again, a cost
    /// every command that reads a secret would pay (docs/performance.md).
    ///
    /// Without a session bus in the environment this throws before asking GLib, which would
    /// otherwise try to start one (`dbus-launch --autolaunch`).
    func sessionBus() throws -> OpaquePointer {
        // libsecret and GLib are loaded here, on first use, not at the program's start.
        guard apnsctl_libsecret_load() != 0 else {
            let why = apnsctl_libsecret_problem().map { String(cString: $0) } ?? "unknown reason"
            throw Self.unavailable(
                "libsecret cannot be loaded (\(why)).",
                hint: "Install it: `sudo apt install libsecret-1-0`."
            )
        }
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
        Self.keepBusConnection(connection)
        return connection
    }

    /// Asks the bus itself, with a short timeout, whether anything owns or can start
    /// org.freedesktop.secrets: libsecret would otherwise wait out D-Bus's 25-second default.
    private func probeBus() throws -> OpaquePointer {
        let connection = try sessionBus()
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
        CredentialError.secretStoreUnavailable("The Secret Service cannot be reached: \(why)", hint: hint)
    }
}
