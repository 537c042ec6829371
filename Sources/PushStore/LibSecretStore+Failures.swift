internal import CLibSecret
import CredentialFormats

/// What a libsecret failure means, told by its GError's domain and code (and, for an error
/// the Secret Service sent that GLib has no code for, by its D-Bus error name, compared
/// whole): never by its message, which only fills in the generic case.
extension LibSecretStore {
    /// What stood in the way, as told by a GError.
    enum Obstacle: Equatable {
        /// The deadline's cancellable fired: nothing answered in time.
        case deadline
        /// D-Bus gave up waiting for the answer itself.
        case noReply
        /// Nothing owns org.freedesktop.secrets, and the bus cannot start anything that would.
        case noProvider
        /// The session bus cannot be connected to, or the connection broke.
        case noBus
        /// What was asked for is locked, and apnsctl does not unlock.
        case locked
        /// The item or collection asked for is gone (removed meanwhile).
        case noSuchObject
        /// Anything else.
        case other
    }

    /// The D-Bus error names of the Secret Service specification apnsctl tells apart, for a
    /// service whose errors libsecret did not map to its own codes.
    static let remoteObstacles: [String: Obstacle] = [
        "org.freedesktop.Secret.Error.IsLocked": .locked,
        "org.freedesktop.Secret.Error.NoSuchObject": .noSuchObject,
        "org.freedesktop.DBus.Error.ServiceUnknown": .noProvider,
        "org.freedesktop.DBus.Error.NameHasNoOwner": .noProvider,
    ]

    static func obstacle(_ error: UnsafeMutablePointer<GError>) -> Obstacle {
        let domain = error.pointee.domain
        let code = error.pointee.code
        if domain == g_io_error_quark() {
            switch code {
            case gint(G_IO_ERROR_CANCELLED.rawValue): return .deadline
            case gint(G_IO_ERROR_TIMED_OUT.rawValue): return .noReply
            case gint(G_IO_ERROR_NOT_FOUND.rawValue), gint(G_IO_ERROR_CONNECTION_REFUSED.rawValue),
                gint(G_IO_ERROR_PERMISSION_DENIED.rawValue), gint(G_IO_ERROR_CLOSED.rawValue),
                gint(G_IO_ERROR_BROKEN_PIPE.rawValue):
                return .noBus
            default: break
            }
        } else if domain == g_dbus_error_quark() {
            switch code {
            case gint(G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue), gint(G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue),
                gint(G_DBUS_ERROR_SPAWN_EXEC_FAILED.rawValue)...gint(G_DBUS_ERROR_SPAWN_NO_MEMORY.rawValue):
                return .noProvider
            case gint(G_DBUS_ERROR_NO_REPLY.rawValue), gint(G_DBUS_ERROR_TIMEOUT.rawValue),
                gint(G_DBUS_ERROR_TIMED_OUT.rawValue):
                return .noReply
            case gint(G_DBUS_ERROR_NO_SERVER.rawValue), gint(G_DBUS_ERROR_FILE_NOT_FOUND.rawValue),
                gint(G_DBUS_ERROR_BAD_ADDRESS.rawValue), gint(G_DBUS_ERROR_AUTH_FAILED.rawValue),
                gint(G_DBUS_ERROR_NO_NETWORK.rawValue), gint(G_DBUS_ERROR_DISCONNECTED.rawValue),
                gint(G_DBUS_ERROR_IO_ERROR.rawValue):
                return .noBus
            default: break
            }
        } else if domain == secret_error_get_quark() {
            switch code {
            case gint(SECRET_ERROR_IS_LOCKED.rawValue): return .locked
            case gint(SECRET_ERROR_NO_SUCH_OBJECT.rawValue): return .noSuchObject
            default: break
            }
        }
        guard let name = g_dbus_error_get_remote_error(error) else { return .other }
        defer { g_free(name) }
        return remoteObstacles[String(cString: name)] ?? .other
    }

    /// The error a failed call to `what` throws: what stood in the way and what to do about it.
    /// The GError's message (libsecret's or GLib's words: a bus address, a D-Bus name, never a
    /// secret) is quoted where the obstacle is not one apnsctl can name itself.
    func failure(_ error: UnsafeMutablePointer<GError>, what: String) -> CredentialError {
        let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        switch Self.obstacle(error) {
        case .deadline:
            return CredentialError(
                .secretStoreUnavailable,
                "The Secret Service did not answer within \(Int(timeout)) s while trying to \(what).",
                hint: "Check that the keyring daemon is running and not waiting on a prompt; unlock it and try again."
            )
        case .noReply:
            return CredentialError(
                .secretStoreUnavailable,
                "The Secret Service did not answer while trying to \(what): D-Bus stopped waiting for it.",
                hint: "Check that the keyring daemon is running and not waiting on a prompt; unlock it and try again."
            )
        case .noProvider:
            return Self.unavailable(
                "no program provides the Secret Service (org.freedesktop.secrets) on this session bus.",
                hint:
                    "Start gnome-keyring (`gnome-keyring-daemon --start --components=secrets`) or enable KeePassXC's Secret Service integration."
            )
        case .noBus:
            return Self.unavailable(
                "the D-Bus session bus does not answer (\(message)).",
                hint: "Check DBUS_SESSION_BUS_ADDRESS, or start a session with `dbus-run-session -- bash`."
            )
        case .locked:
            return CredentialError(
                .secretStoreLocked,
                "The Secret Service refused to \(what): the keyring is locked, and apnsctl does not wait on an unlock prompt.",
                hint: Self.unlockHint
            )
        case .noSuchObject:
            return CredentialError(
                .secretStoreUnavailable,
                "The Secret Service could not \(what): the keyring item or collection it was asked about no longer exists.",
                hint: "Try again; another program may have changed the keyring meanwhile."
            )
        case .other:
            return CredentialError(
                .secretStoreUnavailable,
                "The Secret Service could not \(what): \(message).",
                hint: "Check the keyring daemon's state (`secret-tool search application apnsctl`)."
            )
        }
    }
}
