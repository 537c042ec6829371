import ArgumentParser
import CredentialFormats
import Foundation
import PushTeam

struct TeamAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a member: every secret is encrypted again to the team and them, committed and pushed.",
        discussion: """
            RECIPIENT is the age recipient `apnsctl team join` printed (age1…), or an ssh-ed25519 \
            public key line as age accepts it, given as one argument (for a server that decrypts \
            with its ssh key): "$(cat deploy_ed25519.pub)".

            The new member list is signed with your signing key (made by `team init` or `team \
            join`, kept in the Secret Service); other members take it in only because you are \
            one they trust. A clone with no signing key (CI) cannot change the members. Give \
            --signing-key for a member who will sign changes of their own; a member added \
            without one (CI, a server) reads the secrets and changes no member.

            Exit status: 0 added; 1 refused, nothing changed: no member list of this clone can be \
            trusted, or the sync made first stopped (a conflict, a rewritten history: see `apnsctl \
            team sync`); 2 not added: not a team store, no signing key here, a name, recipient or \
            signing key already a member's, a recipient or --signing-key that is not one, the \
            store could not be read or written; 64 usage error.

            Examples:
              apnsctl team add ci-deploy \\
                age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
            """
    )

    @Argument(help: ArgumentHelp("The new member's name.", valueName: "NAME"))
    var name: String

    @Argument(help: ArgumentHelp("The new member's age recipient or ssh-ed25519 public key.", valueName: "RECIPIENT"))
    var recipient: String

    @Option(
        help: ArgumentHelp(
            "The new member's signing key, as `team join` printed it (ssh-ed25519 key); none for a member that only reads, such as CI.",
            valueName: "KEY"
        )
    )
    var signingKey: String?

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let team = try await store.teamStore()
        try await withUserErrors {
            let key = try signingKey.map { text in
                guard let key = SigningPublicKey(line: text) else {
                    throw CredentialError(
                        .invalidArgument,
                        "--signing-key is not an ssh-ed25519 public key.",
                        hint: "Give the key as the new member's team join printed it."
                    )
                }
                return key
            }
            let change = try await team.add(name: name, recipient: recipient, signingKey: key)
            print(
                "Added \(change.member.name) to the team, signed by you; \(change.reencrypted) secret(s) encrypted again to:"
            )
            for member in change.members { print("  " + TeamWording.member(member)) }
            teamNote(change.published)
        }
    }
}

struct TeamRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove a member: every secret is encrypted again without them; lists what to rotate.",
        discussion: """
            At the new commit the removed member can decrypt nothing. What they could read before \
            stays readable in the repository's history and in any copy they made: rotate every \
            credential listed. The new member list is signed with your signing key, so a \
            removed member can never sign their way back in.

            Exit status: 0 removed; 1 refused, nothing changed: no member list of this clone can be \
            trusted, or the sync made first stopped (a conflict, a rewritten history: see `apnsctl \
            team sync`); 2 not removed: not a team store, no signing key here, no such member, the \
            last member, yourself, the store could not be read or written; 64 usage error.

            Examples:
              apnsctl team remove ci-deploy
            """
    )

    @Argument(help: ArgumentHelp("The member to remove.", valueName: "NAME"))
    var name: String

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let team = try await store.teamStore()
        try await withUserErrors {
            let change = try await team.remove(name: name)
            print(
                "Removed \(change.member.name) from the team, signed by you; \(change.reencrypted) secret(s) encrypted again to:"
            )
            for member in change.members { print("  " + TeamWording.member(member)) }
            teamNote(change.published)
            guard !change.exposed.isEmpty else { return }
            print("")
            print("\(change.member.name) could read these and may have kept them; rotate each one:")
            for credential in change.exposed { print("  " + TeamWording.rotation(credential, store: store)) }
        }
    }
}
