import ArgumentParser
import Foundation
import PushCredentials

struct TeamAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a member: every secret is encrypted again to the team and them, committed and pushed.",
        discussion: """
            RECIPIENT is the age recipient `apnsctl team join` printed (age1…), or an ssh-ed25519 \
            public key line as age accepts it, given as one argument (for a server that decrypts \
            with its ssh key): "$(cat deploy_ed25519.pub)".

            Examples:
              apnsctl team add ci-deploy \\
                age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
            """
    )

    @Argument(help: ArgumentHelp("The new member's name.", valueName: "NAME"))
    var name: String

    @Argument(help: ArgumentHelp("The new member's age recipient or ssh-ed25519 public key.", valueName: "RECIPIENT"))
    var recipient: String

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let team = try store.teamStore()
        try await withUserErrors {
            let change = try team.add(name: name, recipient: recipient)
            print("Added \(change.member.name) to the team; \(change.reencrypted) secret(s) encrypted again to:")
            for member in change.members { print("  \(member.name)  \(member.recipient)") }
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
            credential listed.

            Examples:
              apnsctl team remove ci-deploy
            """
    )

    @Argument(help: ArgumentHelp("The member to remove.", valueName: "NAME"))
    var name: String

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let team = try store.teamStore()
        try await withUserErrors {
            let change = try team.remove(name: name)
            print("Removed \(change.member.name) from the team; \(change.reencrypted) secret(s) encrypted again to:")
            for member in change.members { print("  \(member.name)  \(member.recipient)") }
            teamNote(change.published)
            guard !change.exposed.isEmpty else { return }
            print("")
            print("\(change.member.name) could read these and may have kept them; rotate each one:")
            for credential in change.exposed {
                switch credential.kind {
                case .certificate:
                    print(
                        "  \(credential.alias): revoke the certificate in the Apple Developer portal, make a new one, then "
                            + "`apnsctl import NEW.p12 --password-stdin --replace \(credential.alias)\(store.storeSuffix)`"
                    )
                case .tokenKey:
                    print(
                        "  \(credential.alias): revoke key \(credential.keyID ?? "") in the Apple Developer portal, make a new one, then "
                            + "`apnsctl import AuthKey_NEWKEYID.p8 --team-id \(credential.teamID ?? "TEAMID") --replace \(credential.alias)\(store.storeSuffix)`"
                    )
                }
            }
        }
    }
}
