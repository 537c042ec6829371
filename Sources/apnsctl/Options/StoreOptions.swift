import ArgumentParser
import CredentialFormats
import Foundation
import PushCore
import PushStore
import PushTeam
import PushVaultStore

/// Where the credential store lives.
struct StoreOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The credential store: a folder, or vault:MOUNT/PREFIX for one in Vault or OpenBao (default: $APNSCTL_STORE, else $XDG_DATA_HOME/apnsctl).",
            valueName: "STORE"
        ),
        completion: .directory
    )
    var store: String?

    @Option(
        help: ArgumentHelp(
            "A team store's age identity file, for CI and servers (default: $APNSCTL_IDENTITY, else the Secret Service).",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var identity: String?

    func validate() throws {
        // Hints that name a command give the same store, so that they work when pasted.
        HintContext.store = store
        if let location = vaultLocation {
            // A location that cannot name a store is a usage error, before anything runs.
            do {
                _ = try VaultStore.parse(location)
            } catch let error as CredentialError {
                throw ValidationError(error.message)
            }
            if identity != nil {
                throw ValidationError("--identity is for a team store in git; a store in Vault takes Vault's token.")
            }
            return
        }
        // A folder that is not a store is refused before anything runs, whatever the command.
        do {
            // The folder alone is judged, whichever store it is (a team store is a folder store too).
            try CredentialStore(root: CredentialStore.defaultRoot(explicit: store)).checkFolder()
        } catch let error as CredentialError
            where [.notAStore, .notCheckedOut, .unsafeStoreFolder].contains(error.code)
        {
            reportError(error)
            throw ExitStatus.couldNotCheck
        } catch {
            // A store that cannot be read is reported by whatever reads it.
        }
    }

    /// The store to use: a team store (see `apnsctl team`) tells what became of each change's
    /// commit on stderr, after the command's own output.
    var credentialStore: CredentialStore {
        get async throws {
            if let location = vaultLocation { return try VaultStore.open(location) }
            return await folderStore
        }
    }

    /// `--store` or `APNSCTL_STORE` when it names a store in Vault (`vault:MOUNT/PREFIX`).
    var vaultLocation: String? {
        let given = store ?? ProcessEnvironment.value("APNSCTL_STORE")
        return given.flatMap { VaultStore.isVaultLocation($0) ? $0 : nil }
    }

    /// The store folder's store (a team store when it is one).
    private var folderStore: CredentialStore {
        get async {
            await StoreOpener.open(
                root: CredentialStore.defaultRoot(explicit: store),
                identityFile: identity,
                notify: { teamNote($0) }
            )
        }
    }
}

extension PushEnvironment: ExpressibleByArgument {}

/// `--environment sandbox|production|both` for token-key imports.
enum EnvironmentScope: String, ExpressibleByArgument, CaseIterable {
    case sandbox, production, both

    var environments: [PushEnvironment] {
        switch self {
        case .sandbox: return [.sandbox]
        case .production: return [.production]
        case .both: return [.sandbox, .production]
        }
    }

    /// The scope that names exactly these environments; nil for none.
    init?(_ environments: [PushEnvironment]) {
        switch (environments.contains(.sandbox), environments.contains(.production)) {
        case (true, true): self = .both
        case (true, false): self = .sandbox
        case (false, true): self = .production
        case (false, false): return nil
        }
    }
}
