import CredentialFormats
import Foundation

/// A credential being loaded in a task of its own. Loading a stored credential is mostly
/// waiting for the Secret Service (a D-Bus connection, a session with it, the secret itself);
/// a program that starts the load first can parse the rest of its input, or start connecting,
/// meanwhile. Whoever takes the value gets what ``CredentialLoader/load(_:)`` would have given,
/// errors included.
public final class PendingCredential: Sendable {
    /// What was named, and the store it was looked up in.
    public let argument: String
    public let storePath: String
    private let load: Task<LoadedCredential, any Error>

    init(argument: String, loader: CredentialLoader) {
        self.argument = argument
        self.storePath = loader.store.path
        load = Task { try await loader.load(argument) }
    }

    /// Waits for the load without blocking a thread.
    public var value: LoadedCredential {
        get async throws { try await load.value }
    }
}

extension CredentialLoader {
    /// Starts loading `argument` at once, in a task of its own; see ``PendingCredential``.
    public func begin(_ argument: String) -> PendingCredential {
        PendingCredential(argument: argument, loader: self)
    }
}
