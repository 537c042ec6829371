import ArgumentParser
import Foundation
import PushGateway
import PushStore

extension MessageStoragePolicy: ExpressibleByArgument {
    public init?(argument: String) {
        guard let number = Int(argument) else { return nil }
        self.init(rawValue: number)
    }
}

/// `apnsctl channels`: the broadcast channels of an app (iOS 18 broadcast push).
struct Channels: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Create, list, show and delete an app's broadcast channels.",
        discussion: """
            Broadcast push sends one Live Activity update to every device subscribed to a channel \
            (send --channel ID). Channels are managed on Apple's channel-management service: \
            api-manage-broadcast.sandbox.push.apple.com:2195 for sandbox and \
            api-manage-broadcast.push.apple.com:2196 for production, with the same certificate or \
            token key as notifications. --gateway sends the requests elsewhere (`apnsctl gateway serve` \
            serves channels on its one port).

            An app may have 10,000 channels per environment. The bundle ID defaults to the \
            credential's own.

            Exit status, of every subcommand: 0 done; \(failureStatuses)

            \(examplesIntroduction)
              apnsctl channels create com.example.app-universal \\
                --message-storage-policy 1 --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
              apnsctl channels list com.example.app-universal \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
            """,
        subcommands: [Create.self, List.self, Show.self, Delete.self]
    )

    /// The exit statuses other than 0, the same for every subcommand.
    static let failureStatuses = """
        1 APNs refused the request (its reason is printed), or the server refused the client certificate; \
        2 could not ask (a credential unreadable or not there, DNS, TLS or proxy failure); 64 usage error, \
        also a bundle ID or channel ID that is not one, or a credential that names no app and no BUNDLE-ID.
        """

    static let examplesIntroduction = """
        Examples, against a local gateway on port 2197 (apnsctl gateway serve); without --gateway and --ca \
        they go to Apple.
        """

    /// What every channels subcommand takes.
    struct Common: ParsableArguments {
        @Argument(help: ArgumentHelp("A stored alias, or a .p12/.pem/.p8 file.", valueName: "CREDENTIAL"))
        var credential: String

        @Argument(help: ArgumentHelp("The app's bundle ID (default: the credential's).", valueName: "BUNDLE-ID"))
        var bundleID: String?

        @Flag(help: "Print a versioned JSON report.")
        var json = false

        @Option(help: ConnectionOptions.optionalEnvironmentHelp)
        var environment: PushEnvironment?

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var credentials: CredentialOptions

        func validate() throws {
            if let bundleID { try usage { try ChannelRequestEncoder.checkBundleID(bundleID) } }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a channel; prints its ID.",
            discussion: """
                0 as --message-storage-policy keeps no message for devices that are offline; 1 keeps \
                the most recent one.

                Exit status: 0 created, its ID printed; \(Channels.failureStatuses)

                \(Channels.examplesIntroduction)
                  apnsctl channels create com.example.app-universal \\
                    --message-storage-policy 1 --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
                """
        )
        @OptionGroup var common: Common
        @Option(
            name: .customLong("message-storage-policy"),
            help: ArgumentHelp(
                "0: no message stored for offline devices; 1: the most recent one is stored.",
                valueName: "0|1"
            )
        )
        var policy: MessageStoragePolicy = .noMessageStored

        func run() async throws {
            try await Channels.perform("create", common) { connection, bundleID in
                try await connection.createChannel(bundleID: bundleID, policy: policy)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the IDs of the app's channels.",
            discussion: """
                The bundle ID defaults to the credential's own.

                Exit status: 0 listed (an app with no channel too); \(Channels.failureStatuses)

                \(Channels.examplesIntroduction)
                  apnsctl channels list com.example.app-universal \\
                    --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
                """
        )
        @OptionGroup var common: Common

        func run() async throws {
            try await Channels.perform("list", common) { connection, bundleID in
                try await connection.listChannels(bundleID: bundleID)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show a channel's configuration.",
            discussion: """
                Its message-storage policy and push type.

                Exit status: 0 shown; \(Channels.failureStatuses)

                \(Channels.examplesIntroduction) <CHANNEL-ID> is the ID `apnsctl channels create` printed.
                  apnsctl channels show com.example.app-universal --channel <CHANNEL-ID> \\
                    --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
                """
        )
        @OptionGroup var common: Common
        @Option(help: ArgumentHelp("The channel ID.", valueName: "ID")) var channel: String

        func validate() throws { _ = try usage { try ChannelID(channel) } }

        func run() async throws {
            let id = try ChannelID(channel)
            try await Channels.perform("show", common, channel: id) { connection, bundleID in
                try await connection.readChannel(bundleID: bundleID, id: id)
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete a channel.",
            discussion: """
                Devices subscribed to it get no more broadcasts through it.

                Exit status: 0 deleted; \(Channels.failureStatuses)

                \(Channels.examplesIntroduction) <CHANNEL-ID> is the ID `apnsctl channels create` printed.
                  apnsctl channels delete com.example.app-universal --channel <CHANNEL-ID> \\
                    --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
                """
        )
        @OptionGroup var common: Common
        @Option(help: ArgumentHelp("The channel ID.", valueName: "ID")) var channel: String

        func validate() throws { _ = try usage { try ChannelID(channel) } }

        func run() async throws {
            let id = try ChannelID(channel)
            try await Channels.perform("delete", common, channel: id) { connection, bundleID in
                try await connection.deleteChannel(bundleID: bundleID, id: id)
            }
        }
    }

    /// Connects once, makes one request, reports it.
    static func perform(
        _ action: String,
        _ common: Common,
        channel: ChannelID? = nil,
        _ request: (GatewayConnection, String) async throws -> ChannelResponse
    ) async throws {
        let report: ReportWithRejection<ChannelReport> = try await withUserErrors {
            let (plan, notes) = try common.connection.plan(
                for: try await common.credentials.load(common.credential),
                requested: common.environment,
                service: .channelManagement
            )
            let bundleID = try plan.channelBundleID(given: common.bundleID)
            if !common.json { for line in notes { printError(TerminalStyle.stderr.paint("note: ", .bold) + line) } }
            let response = try await plan.withConnection { try await request($0, bundleID) }
            let fields = ChannelReport(
                action: action,
                credential: plan.credential.name,
                environment: plan.environment,
                gateway: plan.configuration.endpoint.description,
                bundleID: bundleID,
                asked: channel,
                response: response
            )
            return ReportWithRejection(report: fields, error: ChannelErrorObject(response))
        }
        if common.json {
            try printJSON(report)
        } else {
            print(ChannelRenderer.render(report, style: .stdout))
        }
        if report.error != nil { throw ExitStatus.problem }
    }
}
