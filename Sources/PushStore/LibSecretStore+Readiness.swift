internal import CLibSecret
import CredentialFormats
import Foundation

/// Whether the Secret Service can be used now, asked before anything could prompt: libsecret,
/// the session bus, a provider of org.freedesktop.secrets, the default collection and its lock
/// state.
extension LibSecretStore {

    /// Says which of "no libsecret", "no session bus", "no provider", "no default collection"
    /// or "locked" stands in the way, before anything could trigger a prompt.
    func ensureReady() throws { _ = try readyService() }

    /// ``service()`` once the default collection is known to exist and be unlocked: what a
    /// write needs, since libsecret would otherwise ask to unlock it (a prompt).
    func readyService() throws -> GObjectReference {
        let service = try service()
        var found: OpaquePointer?
        try call(what: "open the default collection") { cancellable, error in
            found = secret_collection_for_alias_sync(
                service.pointer,
                "default",
                SECRET_COLLECTION_NONE,
                cancellable,
                &error
            )
            return found == nil ? 0 : 1
        }
        guard let found else {
            throw CredentialError(
                .secretStoreUnavailable,
                "The Secret Service has no default collection (keyring) to store secrets in.",
                hint:
                    "Create one: in GNOME, open Passwords and Keys (seahorse) and add a keyring, or start gnome-keyring-daemon with --unlock to create the login keyring."
            )
        }
        let collection = GObjectReference(found)
        if secret_collection_get_locked(collection.pointer) != 0 {
            throw CredentialError(
                .secretStoreLocked,
                "The Secret Service's default collection (keyring) is locked, and apnsctl does not wait on an unlock prompt.",
                hint: Self.unlockHint
            )
        }
        return service
    }

    /// libsecret's service object with its session open. libsecret keeps the first one made
    /// for the life of the process (its D-Bus connection, and the session whose key exchange
    /// encrypts every secret sent), so only the first call talks to the bus.
    ///
    /// libsecret and GLib are loaded here, on first use, not at the program's start. Without a
    /// session bus in the environment this throws before asking GLib, which would otherwise try
    /// to start one (`dbus-launch --autolaunch`).
    func service() throws -> GObjectReference {
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
        var service: OpaquePointer?
        try call(what: "open a session with the Secret Service") { cancellable, error in
            service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, cancellable, &error)
            return service == nil ? 0 : 1
        }
        guard let service else {
            throw Self.unavailable("libsecret gave no service object.", hint: nil)
        }
        return GObjectReference(service)
    }

    static func unavailable(_ why: String, hint: String?) -> CredentialError {
        CredentialError(.secretStoreUnavailable, "The Secret Service cannot be reached: \(why)", hint: hint)
    }
}
