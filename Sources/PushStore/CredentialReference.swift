import CredentialFormats
import Foundation

/// A credential named by a person: a stored alias, or a file to read with a password (so CI
/// with the bundle and its password in its own secrets needs no store).
public enum CredentialReference: Sendable {
    case stored(StoredCredential)
    case file(String)

    /// Whether `argument` reads as a file first: it has a path separator or a credential file's
    /// extension. A bare word is an alias first.
    public static func looksLikePath(_ argument: String) -> Bool {
        let lowered = argument.lowercased()
        return argument.contains("/") || [".p12", ".pem", ".pfx", ".cer", ".p8"].contains { lowered.contains($0) }
    }

    /// An existing file wins over an alias of the same name only when it ``looksLikePath(_:)``.
    public static func resolve(_ argument: String, store: CredentialStore) async throws -> CredentialReference {
        if !looksLikePath(argument), let stored = try await store.credential(named: argument) { return .stored(stored) }
        if InputFile.exists(argument) { return .file(argument) }
        if let stored = try await store.credential(named: argument) { return .stored(stored) }
        let known = (try? await store.list().map(\.alias)) ?? []
        throw CredentialError.aliasNotFound(
            argument,
            "\(argument) is neither a file nor a credential in the store at \(store.path).",
            hint: known.isEmpty
                ? "Name a .p12/.pem file, or import the credential into the store first."
                : "Stored credentials: \(known.joined(separator: ", "))."
        )
    }

    /// "file" or "store", as reports give it.
    public var origin: String {
        if case .file = self { return "file" }
        return "store"
    }
}
