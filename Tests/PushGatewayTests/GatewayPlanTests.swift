import CredentialFormats
import Foundation
import LocalGateway
import PushChecks
import PushGateway
import PushStore
import TestSupport
import Testing

/// A credential matched with a gateway as `handshake` and `send` match it, from the library
/// alone: the environment and why, the topic with its suffix, what warns before connecting, and
/// one notification sent over a connection that is closed after it.
struct GatewayPlanTests {
    static func local(_ running: RunningGateway, environment: PushEnvironment? = nil) -> ConnectionSettings {
        ConnectionSettings(
            environment: environment,
            gateway: "127.0.0.1:\(running.port)",
            caFiles: [running.caFile],
            timeout: 60,
            processEnvironment: [:]
        )
    }

    @Test func theEnvironmentIsAskedForTheCredentialsOnlyOneOrSandbox() throws {
        let production = try LoadedCredential(name: "production.p12", file: try Fixtures.production())
        let universal = try LoadedCredential(name: "universal.p12", file: try Fixtures.universal())
        let settings = ConnectionSettings(processEnvironment: [:])

        let only = try GatewayPlan(production, settings: settings)
        #expect(only.environment == .production && only.choice.reason == .credentialOnly)
        #expect(only.configuration.endpoint.host == "api.push.apple.com")

        let defaulted = try GatewayPlan(universal, settings: settings)
        #expect(defaulted.environment == .sandbox && defaulted.choice.reason == .defaultSandbox)
        #expect(defaulted.configuration.endpoint.host == "api.sandbox.push.apple.com")

        var asked = settings
        asked.environment = .sandbox
        let mismatch = try GatewayPlan(production, settings: asked)
        #expect(mismatch.environment == .sandbox && mismatch.choice.reason == .given)
        // A production certificate sent to sandbox: said before anything connects.
        #expect(mismatch.warnings.map(\.code.rawValue).contains("environment_mismatch"))
        #expect(only.warnings.isEmpty)
    }

    @Test func theTopicTakesThePushTypesSuffixOnce() throws {
        let universal = try LoadedCredential(name: "universal.p12", file: try Fixtures.universal())
        let settings = ConnectionSettings(processEnvironment: [:])
        #expect(try GatewayPlan(universal, settings: settings).topic == "com.example.app")
        #expect(try GatewayPlan(universal, settings: settings, pushType: .voip).topic == "com.example.app.voip")
        for given in ["com.example.app", "com.example.app.voip"] {
            #expect(
                try GatewayPlan(universal, settings: settings, topic: given, pushType: .voip).topic
                    == "com.example.app.voip"
            )
        }
        let other = try GatewayPlan(universal, settings: settings, topic: "com.other.app")
        #expect(other.topic == "com.other.app")
        #expect(other.warnings.map(\.code.rawValue).contains("topic_not_covered"))
    }

    @Test func sendConnectsSendsAndCloses() async throws {
        try await RunningGateway.Setup().run { running in
            let universal = try LoadedCredential(name: "universal.p12", file: try Fixtures.universal())
            let plan = try GatewayPlan(universal, settings: Self.local(running))
            #expect(plan.environment == .sandbox && plan.choice.reason == .defaultSandbox)
            #expect(plan.topic == "com.example.app")
            let accepted = try await plan.send(try .alert(topic: plan.topic))
            #expect(accepted.status == 200)
            // Another app's topic: the certificate does not cover it.
            let rejected = try await plan.send(try .alert(topic: "com.other.app"))
            #expect(rejected.status == 400 && rejected.reason == .topicDisallowed)
            // One connection per send, each closed when its answer came.
            #expect(try await eventually { running.gateway.openConnections == 0 })
            #expect(running.gateway.statistics.connections == 2)
        }
    }
}
