import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a credential or a pending request from the store, and its secret from the Secret Service.",
        discussion: """
            A removal is one step: the entry leaves the index, then its files and secret are deleted; \
            a removal interrupted at any point is completed (or, if the index was not written yet, \
            undone) by the next apnsctl command on the store. Secrets of this store that no index \
            entry names for another reason (removed by hand from the index, say) are orphaned \
            secrets: `apnsctl check` reports them; `apnsctl remove --orphans` removes them all, and \
            `apnsctl remove ALIAS` those of one alias.

            A pending request (see `apnsctl request`) is removed the same way: its index entry first, \
            then its private key.

            Files an index entry names outside the store's credentials folder are never deleted.

            Exit status: 0 removed (or, with --orphans, nothing to remove); 2 no such alias, the \
            store could not be read or written, or the entry and files are gone but the secret \
            could not be removed from the Secret Service (the next command on the store removes \
            it); 64 usage error (neither or both of an alias and --orphans).

            Examples:
              apnsctl remove token-ABC123DEFG
              apnsctl remove --orphans
            """
    )

    @Argument(
        help: ArgumentHelp("The alias to remove (see `apnsctl list`).", valueName: "ALIAS"),
        completion: .storedAlias
    )
    var alias: String?

    @Flag(help: "Remove the store's orphaned secrets (Secret Service items no index entry names).")
    var orphans = false

    @OptionGroup var store: StoreOptions

    func validate() throws {
        if orphans, alias != nil { throw ValidationError("Give an alias or --orphans, not both.") }
        if !orphans, alias == nil { throw ValidationError("Give the alias to remove, or --orphans.") }
    }

    func run() async throws {
        let store = try await self.store.credentialStore
        try await withUserErrors {
            if orphans {
                let removed = try await store.removeOrphanedSecrets()
                if removed.isEmpty {
                    print("The store at \(store.path) has no orphaned secrets; nothing was removed.")
                    return
                }
                print("Removed \(removed.count) orphaned secret(s) of \(store.path) from the Secret Service:")
                for item in removed { print("  \(describe(item))") }
                return
            }
            guard let alias else { return }
            let removal: CredentialStore.Removal
            switch try await store.remove(named: alias) {
            case .request(_, let removedSecret):
                print("Removed the pending request \(alias) from \(store.path):")
                print("  index entry")
                print(
                    removedSecret
                        ? "  its private key \"apnsctl: \(alias)\" from the Secret Service"
                        : "  no private key was found in the Secret Service (already gone)"
                )
                return
            case .credential(let removed):
                removal = removed
            }
            guard let credential = removal.credential else {
                print("\(alias) had no index entry in \(store.path); removed its orphaned secret(s):")
                for item in removal.orphansRemoved { print("  \(describe(item))") }
                return
            }
            print("Removed \(credential.alias) from \(store.path):")
            print("  index entry")
            for file in removal.files { print("  file \(file)") }
            for file in removal.filesLeftAlone {
                print("  left alone: \(file) (named by the entry, but outside the store's credentials folder)")
            }
            if let error = removal.secretError {
                reportError(
                    CredentialError(
                        .storeError,
                        "The entry and files of \(alias) are gone, but its secret could not be removed from the Secret Service: \(error.message)",
                        hint:
                            "The next apnsctl command on this store removes it once the Secret Service works; `\(ErrorHints.command("list"))` is enough.",
                        alias: alias
                    )
                )
                throw ExitStatus.couldNotCheck
            }
            let place = store.secrets.placeOf(credential.secretItem(store: store.path))
            print(
                removal.removedSecret
                    ? "  its secret, kept \(place)"
                    : "  no secret was found \(place) (already gone)"
            )
        }
    }

    private func describe(_ item: SecretItem) -> String {
        "\"\(item.label)\" (\(item.kind.rawValue)\(item.identifier.isEmpty ? "" : ", \(item.identifier)"))"
    }
}
