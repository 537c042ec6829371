import CredentialFormats
import Foundation
import PushCore
import PushGateway
import PushStore

/// A loaded credential matched with a gateway, before anything connects: the environment and
/// why it was chosen, the configuration to connect with, the topic, and what predicts a
/// rejection there. `handshake`, `send` and a broadcast start from one; a Swift server can too:
///
/// ```swift
/// let credential = try await CredentialLoader.load("com.example.app-universal", store: store)
/// let plan = try GatewayPlan(credential, settings: ConnectionSettings(environment: .production))
/// let response = try await plan.send(notification)
/// ```
public struct GatewayPlan: Sendable {
    public var credential: LoadedCredential
    /// The environment, and whether it was asked for, the credential's only one, or the default.
    public var choice: ConnectionSettings.EnvironmentChoice
    /// What to connect with: endpoint, TLS identity or token, trust roots, proxy and timeouts.
    public var configuration: GatewayConfiguration
    /// The proxy and where it came from; nil for a direct connection.
    public var proxy: ProxySettings?
    /// One line each, for the user: a legacy host or port mapped to the HTTP/2 API.
    public var notices: [String]
    /// The topic asked for, else the credential's default (for ``pushType``, with its suffix).
    public var topic: String?
    /// What predicts a rejection of this credential for this environment and topic: expired,
    /// the other environment only, a topic it does not cover.
    public var warnings: [Finding]

    public var environment: PushEnvironment { choice.environment }

    /// Which of APNs' services the plan connects to.
    public enum Service: Sendable {
        /// Notifications and broadcasts (api.push.apple.com).
        case push
        /// Creating, listing and deleting broadcast channels (its own host and port).
        case channelManagement
    }

    /// Matches `credential` with the gateway `settings` describe. `topic` given for a push type
    /// that needs a suffix (`.voip`, `.push-type.liveactivity`...) gets it added.
    public init(
        _ credential: LoadedCredential,
        settings: ConnectionSettings,
        topic: String? = nil,
        pushType: PushType = .alert,
        service: Service = .push,
        at date: Date = Date()
    ) throws {
        self.credential = credential
        choice = settings.chooseEnvironment(for: credential)
        let plan =
            switch service {
            case .push: try settings.configuration(for: credential, environment: choice.environment)
            case .channelManagement:
                try settings.channelManagementConfiguration(for: credential, environment: choice.environment)
            }
        configuration = plan.configuration
        proxy = plan.proxy
        notices = plan.notices
        self.topic = topic.map(pushType.topic(for:)) ?? credential.defaultTopic(for: pushType)
        warnings = credential.preflightFindings(environment: choice.environment, topic: self.topic, at: date)
    }

    /// Connects, runs `body` on the connection, and closes (the close awaited, however `body` ends).
    public func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (GatewayConnection) async throws -> Result
    ) async throws -> Result {
        try await GatewayConnection.withConnection(configuration, isolation: isolation, body)
    }

    /// Connects, sends `notification`, and closes.
    public func send(_ notification: PushNotification) async throws -> PushResponse {
        try await GatewayConnection.withConnection(configuration.forOneExchange) { try await $0.send(notification) }
    }

    /// The app a channel request is about: `given`, else the credential's bundle ID.
    public func channelBundleID(given: String?) throws -> String {
        if let given { return given }
        guard let topic = credential.defaultTopic else {
            throw PushCoreError(
                .invalidChannel,
                "The credential \(credential.name) names no app, so the bundle ID cannot be taken from it.",
                hint: "Give the app's bundle ID."
            )
        }
        return TopicScope.app(of: topic)
    }
}

extension GatewayPlan {
    /// Connects, sends one broadcast to a channel, and closes.
    public func broadcast(_ notification: BroadcastNotification) async throws -> ChannelResponse {
        try await GatewayConnection.withConnection(configuration.forOneExchange) {
            try await $0.broadcast(notification)
        }
    }
}

extension HandshakeCheck {
    /// Connects as `plan` says, runs the auth check with the plan's topic when asked, and closes.
    public static func run(_ plan: GatewayPlan, authCheck: Bool) async -> HandshakeCheck {
        await run(configuration: plan.configuration, topic: plan.topic, authCheck: authCheck)
    }
}
