import ArgumentParser
import Foundation
import PushCredentials

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove a credential or a pending request from the store, and its secret from the Secret Service."
    )

    @Argument(help: ArgumentHelp("The alias to remove (see `apnsctl list`).", valueName: "ALIAS"))
    var alias: String

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let store = self.store.credentialStore
        do {
            if try store.pendingRequest(named: alias) != nil {
                let removed = try store.removeRequest(alias: alias)
                print("Removed the pending request \(alias) from \(store.path):")
                print("  index entry")
                print(
                    removed.removedSecret
                        ? "  its private key \"apnsctl: \(alias)\" from the Secret Service"
                        : "  no private key was found in the Secret Service (already gone)"
                )
                return
            }
            let removed = try store.remove(alias: alias)
            print("Removed \(removed.credential.alias) from \(store.path):")
            print("  index entry")
            for file in removed.files { print("  file \(file)") }
            print(
                removed.removedSecret
                    ? "  secret \"apnsctl: \(alias)\" from the Secret Service"
                    : "  no secret was found in the Secret Service (already gone)"
            )
        } catch let error as CredentialError {
            reportError(error)
            throw ExitStatus.couldNotCheck
        }
    }
}
