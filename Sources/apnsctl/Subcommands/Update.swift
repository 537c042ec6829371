import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

struct Update: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change what a stored token key is recorded to be for: its topics, environments or team.",
        discussion: """
            Apple issues token keys for the whole team (both environments), for one environment, or \
            for certain topics; `check` judges a deploy against what is recorded here. For example:

              apnsctl update token-ABC123DEFG --topic com.example.app --topic com.example.other \
            --environment production

            --topic replaces the recorded topics (give it once per app); --environment replaces the \
            environments. The key itself stays in the Secret Service as it is. Certificates carry \
            their own topics, environments and team and cannot be edited: import a new certificate \
            with --replace instead.

            Exit status: 0 updated; 2 nothing changed: no such alias, a certificate rather than a \
            token key, a --team-id or --topic that is not one, or the store could not be read or \
            written; 64 usage error (nothing to change, a placeholder such as "<BUNDLE-ID>").

            Examples:
              apnsctl update token-ABC123DEFG --topic com.example.app \\
                --topic com.example.other --environment production
            """
    )

    @Argument(
        help: ArgumentHelp("The stored token key (see `apnsctl list`).", valueName: "ALIAS"),
        completion: .storedAlias
    )
    var alias: String

    @Option(help: ArgumentHelp("A bundle ID the key may push to (repeatable; replaces the list).", valueName: "BUNDLE"))
    var topic: [String] = []

    @Option(help: ArgumentHelp("The environments the key serves.", valueName: "sandbox|production|both"))
    var environment: EnvironmentScope?

    @Option(help: ArgumentHelp("The 10-character team ID the key belongs to.", valueName: "TEAMID"))
    var teamID: String?

    @Flag(help: "Print the updated entry as JSON.")
    var json = false

    @OptionGroup var store: StoreOptions

    func validate() throws {
        for topic in topic { try TopicPlaceholder.refuse(topic) }
        if topic.isEmpty, environment == nil, teamID == nil {
            throw ValidationError("Say what to change: --topic BUNDLE (repeatable), --environment or --team-id.")
        }
    }

    func run() async throws {
        let store = try await self.store.credentialStore
        try await withUserErrors {
            let (before, after) = try await store.updateTokenKey(
                alias: alias,
                .init(
                    topics: topic.isEmpty ? nil : topic,
                    environments: environment?.environments,
                    teamID: teamID
                )
            )
            if json {
                try printJSON(
                    UpdateOutput(
                        store: store.path,
                        updated: CredentialSummary(after)
                    )
                )
                return
            }
            let style = TerminalStyle.stdout
            print("\(style.paint("✓", .green)) Updated \(style.paint(after.alias, .bold)) in \(store.path)")
            func line(_ name: String, _ old: String, _ new: String) {
                print("  \(name): " + (old == new ? new : "\(old) → \(new)"))
            }
            line("topics", Self.describe(topics: before.topics), Self.describe(topics: after.topics))
            line(
                "environments",
                Self.describe(environments: before.environments),
                Self.describe(environments: after.environments)
            )
            line("team", before.teamID ?? "none", after.teamID ?? "none")
        }
    }

    static func describe(topics: [String]) -> String {
        topics.isEmpty ? "none recorded" : topics.joined(separator: ", ")
    }

    static func describe(environments: [PushEnvironment]) -> String {
        environments.isEmpty ? "none recorded" : environments.map(\.rawValue).joined(separator: " + ")
    }
}

struct UpdateOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var store: String
    var updated: CredentialSummary
}
