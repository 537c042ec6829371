import ArgumentParser
import CredentialFormats
import Foundation
import PushStore
import PushTeam

/// `apnsctl team …`: the store shared through a git repository, its secrets encrypted with age.
struct Team: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team",
        abstract: "Share the store with a team through a git repository, its secrets encrypted with age.",
        discussion: """
            A team store is a git repository: the index, certificates and member list in plain \
            form, and every secret (a .p12 password, a private key, a .p8) only as an age file \
            encrypted to every member. Every command that changes the store commits what changed \
            and pushes; offline the commit waits for `apnsctl team sync`.

            On CI and servers, a plain `git clone` is a usable store with the identity in \
            APNSCTL_IDENTITY or --identity FILE; no Secret Service is needed. See docs/team.md.

            REMOTE is any URL git reaches (git@git.example.com:mobile/push-credentials.git, \
            https://…, a path); the examples use a bare repository made by `git init --bare \
            push-credentials.git`.

            Exit status: that of the subcommand run (see each one's --help); 0 with none, which \
            prints this help; 64 usage error.

            Examples:
              apnsctl team init push-credentials.git --name alice
              apnsctl team status
            """,
        subcommands: [TeamInit.self, TeamJoin.self, TeamAdd.self, TeamRemove.self, TeamSync.self, TeamStatus.self]
    )
}

/// A stderr line for what a team store did beyond the command's output.
func teamNote(_ note: String) {
    _ = writeAll(STDERR_FILENO, Array(TerminalSafe.filter(note + "\n", colours: false).utf8))
}

extension StoreOptions {
    var storeRoot: URL { CredentialStore.defaultRoot(explicit: store) }

    /// Team commands share a store through git; a store in Vault is shared through Vault's policies.
    func refuseVaultStore() throws {
        guard let location = vaultLocation else { return }
        throw ValidationError(
            "The store \(location) is in Vault, which shares it through its policies (docs/vault.md); team commands are for a store shared through git."
        )
    }

    /// `--identity` on a command that makes this member's identity (`team init`, `team join`):
    /// refused rather than ignored, since the identity made goes to the Secret Service and a file
    /// given here would not be among the recipients afterwards.
    func refuseIdentityFile(making command: String) throws {
        guard identity != nil else { return }
        throw ValidationError(
            "--identity reads a team store where there is no Secret Service (CI, servers); `apnsctl team \(command)` makes your own age identity and signing key and keeps them in the Secret Service, so it takes no identity file. For a CI runner or a server, make its identity with age-keygen and have a member add its public line (age1…) to the team: see `apnsctl team add --help`."
        )
    }

    /// The team store at `--store`, or a refusal that says how to make one.
    func teamStore() async throws -> TeamStore {
        try refuseVaultStore()
        let root = storeRoot
        guard TeamStore.isTeamStore(root) else {
            reportError(
                CredentialError(
                    .teamError,
                    path: root.path,
                    "This store is not a team store.",
                    hint:
                        "Make it one with `apnsctl team init REMOTE --name NAME`, or join a team's store with `apnsctl team join REMOTE --name NAME` into an empty folder."
                )
            )
            throw ExitStatus.couldNotCheck
        }
        return await TeamStore(root: root, identityFile: identity, notify: { teamNote($0) })
    }

    /// ` --store DIR` when a store was named, so that printed commands work when pasted.
    var storeSuffix: String { store.map { " --store \(ErrorHints.shellQuoted($0))" } ?? "" }
}

struct TeamInit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Make this store a team store backed by REMOTE, with you as its first member.",
        discussion: """
            REMOTE is any git URL (ssh, https, a path) of an empty repository. A new age identity \
            is made for you and kept in the Secret Service; the store's existing secrets are \
            encrypted to it, leave the Secret Service, and are committed and pushed.

            Any git URL works, such as git@git.example.com:mobile/push-credentials.git.

            Exit status: 0 the store is a team store; 2 it is not: a team store already, a remote \
            that holds commits, a name that cannot be used, the Secret Service, age or git not \
            available; 64 usage error.

            Examples:
              apnsctl team init push-credentials.git --name alice
            """
    )

    @Argument(help: ArgumentHelp("The git repository to share the store through.", valueName: "REMOTE"))
    var remote: String

    @Option(help: ArgumentHelp("Your name in the team.", valueName: "NAME"))
    var name: String

    @OptionGroup var store: StoreOptions

    func validate() throws { try store.refuseIdentityFile(making: "init") }

    func run() async throws {
        try store.refuseVaultStore()
        try await withUserErrors {
            let setup = try await TeamStore.initialize(
                root: store.storeRoot,
                remote: remote,
                name: name,
                notify: { teamNote($0) }
            )
            if setup.repaired == false { teamNote("team store: an interrupted team init was undone first.") }
            print("The store at \(store.storeRoot.path) is now a team store backed by \(remote).")
            print("  member:      \(setup.member)")
            print("  recipient:   \(setup.recipient)")
            print("  signing key: \(setup.signingKey.fingerprint)")
            print("  identity and signing key: in the Secret Service")
            print("  secrets encrypted into the repository: \(setup.encrypted.count)")
            if let published = setup.published { teamNote(published) }
            print(
                "Others join with `apnsctl team join \(ErrorHints.shellQuoted(remote)) --name NAME` and send you the command it prints."
            )
        }
    }
}

struct TeamJoin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Clone a team store into an empty store folder, and print the command a member runs to add you.",
        discussion: """
            A new age identity and a signing key are made for you and kept in the Secret \
            Service. The member list is checked from the repository's first one, signed by its \
            founder, through every signed change since; the members printed are the ones your \
            clone trusts from now on: compare their key fingerprints with what they tell you. \
            Until a member has added you (and you have run `apnsctl team sync`), the store \
            shows its metadata (`apnsctl list`, `apnsctl check --skip-secrets`) and no secret.

            Exit status: 0 joined; 1 not joined: no member list of the repository can be trusted \
            from its first one; 2 not joined: the store folder not empty, the remote not reached \
            or not a team store, the name taken, the Secret Service unavailable; 64 usage error. \
            Nothing is left behind when it is not joined.

            Examples (into the store folder bob-store):
              apnsctl team join push-credentials.git --name bob --store bob-store
            """
    )

    @Argument(help: ArgumentHelp("The team's git repository.", valueName: "REMOTE"))
    var remote: String

    @Option(help: ArgumentHelp("Your name in the team.", valueName: "NAME"))
    var name: String

    @OptionGroup var store: StoreOptions

    func validate() throws { try store.refuseIdentityFile(making: "join") }

    func run() async throws {
        try store.refuseVaultStore()
        try await withUserErrors {
            let setup = try await TeamStore.join(root: store.storeRoot, remote: remote, name: name)
            print("Cloned \(remote) into \(store.storeRoot.path).")
            print("  your recipient:   \(setup.recipient)")
            print("  your signing key: \(setup.signingKey.fingerprint)")
            print("The members your clone now trusts (their signatures are checked from the team's first member list):")
            for member in setup.members { print("  " + TeamWording.member(member)) }
            if let pending = setup.pending {
                print("")
                print(TeamWording.untrusted(pending, trusted: setup.members, store: store))
            }
            print("Ask a member of the team to run:")
            print("")
            let blob = Data(setup.signingKey.blob).base64EncodedString()
            print("  apnsctl team add \(setup.member) \(setup.recipient) --signing-key \(blob)")
            print("")
            print("then run `apnsctl team sync\(store.storeSuffix)`. Until then only metadata can be read.")
        }
    }
}
