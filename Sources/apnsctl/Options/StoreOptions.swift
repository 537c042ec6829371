import ArgumentParser
import Foundation
import PushCredentials

/// Where the credential store lives.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The credential store folder (default: $APNSCTL_STORE, else $XDG_DATA_HOME/apnsctl).", valueName: "DIR"))
    var store: String?

    var credentialStore: CredentialStore {
        CredentialStore(root: CredentialStore.defaultRoot(explicit: store))
    }
}

/// A credential named on the command line: a stored alias, or a file read with the password
/// options (so CI with the bundle and its password in its own secrets needs no store).
enum CredentialReference {
    case stored(StoredCredential)
    case file(String)

    /// An existing file wins over an alias of the same name only when it has a path separator
    /// or an extension; a bare word is an alias first.
    static func resolve(_ argument: String, store: CredentialStore) throws -> CredentialReference {
        let looksLikePath = argument.contains("/") || argument.contains(".p12") || argument.contains(".pem")
            || argument.contains(".pfx") || argument.contains(".cer") || argument.contains(".p8")
        if !looksLikePath, let stored = try store.credential(named: argument) { return .stored(stored) }
        if FileManager.default.fileExists(atPath: argument) { return .file(argument) }
        if let stored = try store.credential(named: argument) { return .stored(stored) }
        let known = (try? store.list().map(\.alias)) ?? []
        throw CredentialError(.aliasNotFound, path: nil, "\(argument) is neither a file nor a credential in the store at \(store.path).",
                              hint: known.isEmpty ? "Give a .p12/.pem file, or import one first with `apnsctl import FILE`."
                                                  : "Stored credentials: \(known.joined(separator: ", ")).")
    }
}

extension PushEnvironment: ExpressibleByArgument {}

/// `--environment sandbox|production|both` for token-key imports.
enum EnvironmentChoice: String, ExpressibleByArgument, CaseIterable {
    case sandbox, production, both

    var environments: [PushEnvironment] {
        switch self {
        case .sandbox: return [.sandbox]
        case .production: return [.production]
        case .both: return [.sandbox, .production]
        }
    }
}
