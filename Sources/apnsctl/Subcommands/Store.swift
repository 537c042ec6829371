import ArgumentParser
import CredentialFormats
import Foundation
import PushStore
import PushTeam
import PushVaultStore

struct Store: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Work on whole stores: copy one into another (a team's git store into Vault, say).",
        discussion: """
            Exit status: that of the subcommand run (see each one's --help); 0 with none, which \
            prints this help; 64 usage error.

            Examples:
              apnsctl store copy ~/.local/share/apnsctl vault:secret/apnsctl
            """,
        subcommands: [StoreCopyCommand.self]
    )
}

struct StoreCopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy every credential of one store into another, under the same aliases.",
        discussion: """
            FROM and TO are each a store folder (a keyring store or a team store) or a store in \
            Vault or OpenBao (vault:MOUNT/PREFIX, with VAULT_ADDR and VAULT_TOKEN or the other \
            settings docs/vault.md lists). Each credential is read from FROM with its secret and \
            imported into TO in memory: nothing is downloaded from Apple again, and no secret is \
            written to a file on the way. A certificate or key TO already holds is left as it is, \
            so a copy can be run again. Token keys copied into Vault are imported into Transit and \
            cannot be read back; they stay in FROM too unless --remove-moved-keys is given.

            A token key that signs inside FROM (a store in Vault) cannot be copied: its key never \
            leaves Transit. Pending requests are not copied: complete them in FROM first.

            Exit status: 0 every credential is in TO; 2 a store could not be read or written, or \
            some credential could not be copied (each is named; the others were copied); 64 usage \
            error.

            Examples:
              apnsctl store copy ~/.local/share/apnsctl vault:secret/apnsctl
              apnsctl store copy ~/.local/share/apnsctl vault:secret/apnsctl --remove-moved-keys
              apnsctl store copy vault:secret/apnsctl laptop-store --json
            """
    )

    @Argument(help: ArgumentHelp("The store to copy from: a folder, or vault:MOUNT/PREFIX.", valueName: "FROM"))
    var from: String

    @Argument(help: ArgumentHelp("The store to copy into: a folder, or vault:MOUNT/PREFIX.", valueName: "TO"))
    var to: String

    @Option(
        help: ArgumentHelp(
            "FROM is a team store: its age identity file (default: $APNSCTL_IDENTITY, else the Secret Service).",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var identity: String?

    @Flag(help: "Remove each token key from FROM once TO holds it in Vault's Transit, so that it exists in one place.")
    var removeMovedKeys = false

    @Flag(help: "Print the outcome as JSON.")
    var json = false

    func validate() throws {
        for location in [from, to] where VaultStore.isVaultLocation(location) {
            do {
                _ = try VaultStore.parse(location)
            } catch let error as CredentialError {
                throw ValidationError(error.message)
            }
        }
        if from == to { throw ValidationError("FROM and TO are the same store.") }
    }

    func run() async throws {
        let report = try await withUserErrors {
            let source = try await open(from, identity: identity)
            let target = try await open(to, identity: nil)
            return try await StoreCopy(from: source, to: target, removeMovedTokenKeys: removeMovedKeys).run()
        }
        if json {
            try printJSON(StoreCopyJSON(report))
        } else {
            render(report)
        }
        if report.failed { throw ExitStatus.couldNotCheck }
    }

    private func open(_ location: String, identity: String?) async throws -> CredentialStore {
        if VaultStore.isVaultLocation(location) { return try VaultStore.open(location) }
        return await StoreOpener.open(
            root: CredentialStore.defaultRoot(explicit: location),
            identityFile: identity,
            notify: { teamNote($0) }
        )
    }

    private func render(_ report: StoreCopy.Report) {
        if report.entries.isEmpty {
            print("The store \(report.source) holds no credentials; nothing was copied.")
            return
        }
        print("Copying \(report.source) → \(report.target):")
        for entry in report.entries {
            let alias = entry.credential.alias
            switch entry.outcome {
            case .copied(let removed):
                print("  ✓ \(alias) copied" + (removed ? "; its key was removed from \(report.source)" : ""))
            case .alreadyThere(let existing):
                print("  = \(alias) already there" + (existing == alias ? "" : " as \(existing)"))
            case .skipped(let reason):
                print("  - \(alias) left where it is: \(reason)")
            case .failed(let error):
                print("  ✗ \(alias) not copied: \(error.message)")
                if let hint = error.hint { print("      → \(hint)") }
            }
        }
        let copied = report.entries.filter { if case .copied = $0.outcome { true } else { false } }.count
        let failed = report.entries.filter { if case .failed = $0.outcome { true } else { false } }.count
        print("\n\(copied) copied, \(report.entries.count - copied - failed) already there or left, \(failed) failed")
    }
}

/// `store copy --json`: one entry per credential, its outcome and, when it failed, why.
struct StoreCopyJSON: Encodable {
    struct Entry: Encodable {
        var credential: String
        var outcome: String
        var detail: String?
        var error: ReportedError?
    }

    var schemaVersion = ReportSchema.schemaVersion
    var source: String
    var target: String
    var entries: [Entry]

    init(_ report: StoreCopy.Report) {
        source = report.source
        target = report.target
        entries = report.entries.map { entry in
            let alias = entry.credential.alias
            switch entry.outcome {
            case .copied(let removed):
                return Entry(credential: alias, outcome: removed ? "moved" : "copied")
            case .alreadyThere(let existing):
                return Entry(credential: alias, outcome: "already_there", detail: existing == alias ? nil : existing)
            case .skipped(let reason):
                return Entry(credential: alias, outcome: "skipped", detail: reason)
            case .failed(let error):
                return Entry(credential: alias, outcome: "failed", error: error.reported)
            }
        }
    }
}
