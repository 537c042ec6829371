import CredentialFormats
import Foundation
import LocalGateway
import PushChecks
import PushGateway
import PushStore
import TestSupport
import Testing

/// The auth check and preflight against a real local gateway (TLS + HTTP/2 on 127.0.0.1).
@Suite(.timeLimit(.minutes(2))) struct AuthCheckTests {
    static func settings(_ running: RunningGateway, timeout: Double = 60) -> ConnectionSettings {
        ConnectionSettings(
            gateway: "127.0.0.1:\(running.port)",
            caFiles: [running.caFile],
            timeout: timeout,
            processEnvironment: [:]
        )
    }

    /// The handshake check of `client` through `running` (sandbox), to `topic`.
    static func check(
        _ running: RunningGateway,
        _ client: ClientCredential,
        topic: String = "com.example.app",
        authCheck: Bool = true
    ) async throws -> HandshakeCheck {
        let plan = try settings(running).configuration(for: client, environment: .sandbox)
        return await HandshakeCheck.run(configuration: plan.configuration, topic: topic, authCheck: authCheck)
    }

    @Test func badDeviceTokenMeansAccepted() async throws {
        // An empty registry knows no token: the gateway answers as APNs does, 400 BadDeviceToken.
        try await RunningGateway.Setup(.sandbox, configure: { $0.deviceRegistry = [:] }).run { running in
            let credential = try LoadedCredential(name: "universal", file: try Fixtures.universal())
            let plan = try Self.settings(running).configuration(for: credential, environment: .sandbox)
            let check = await HandshakeCheck.run(
                configuration: plan.configuration,
                topic: "com.example.app",
                authCheck: true
            )
            #expect(check.error == nil)
            #expect(check.verdict == .accepted)
            #expect(check.authCheck?.status == 400)
            #expect(check.authCheck?.reason == "BadDeviceToken")
            #expect(check.handshake.alpn == "h2")
            // It went through the gateway as a notification: counted there as a rejection.
            #expect(running.gateway.statistics.accepted == 0)
        }
    }

    @Test func gatewayWithoutRegistryAcceptsTheMadeUpToken() async throws {
        try await RunningGateway.with(.sandbox) { running in
            let check = try await Self.check(running, .token(try Fixtures.providerKey()))
            #expect(check.verdict == .accepted)
            #expect(check.authCheck?.status == 200)
            #expect(running.gateway.statistics.accepted == 1)
        }
    }

    @Test func wrongTeamIsRejected() async throws {
        try await RunningGateway.with(.sandbox) { running in
            let check = try await Self.check(running, .token(try Fixtures.providerKey(teamID: "ZZZZZ99999")))
            #expect(check.verdict == .rejected)
            #expect(check.authCheck?.status == 403)
            #expect(check.authCheck?.reason != nil)
        }
    }

    @Test func topicTheCertificateDoesNotCoverIsRejected() async throws {
        try await RunningGateway.Setup(.sandbox, configure: { $0.deviceRegistry = [:] }).run { running in
            let check = try await Self.check(running, .certificate(try Fixtures.universal()), topic: "com.other.app")
            #expect(check.verdict == .rejected)
            #expect(check.authCheck?.status == 400)
            #expect(["TopicDisallowed", "BadTopic"].contains(check.authCheck?.reason ?? ""))
        }
    }

    @Test func handshakeOnlyDoesNotSend() async throws {
        try await RunningGateway.with(.sandbox) { running in
            let check = try await Self.check(running, .certificate(try Fixtures.universal()), authCheck: false)
            #expect(check.verdict == .connected && check.authCheck == nil)
            #expect(running.gateway.statistics.accepted == 0)
        }
    }

    @Test func unreachableGatewayIsFailedWithTheReport() async throws {
        let settings = ConnectionSettings(gateway: "127.0.0.1:1", timeout: 5, processEnvironment: [:])
        let plan = try settings.configuration(for: .none, environment: .sandbox)
        let check = await HandshakeCheck.run(configuration: plan.configuration, topic: nil, authCheck: true)
        #expect(check.verdict == .failed)
        #expect(check.error?.code == .connectionRefused)
        #expect(check.authCheck == nil)
        #expect(check.handshake.endpoint == Endpoint(host: "127.0.0.1", port: 1))
    }

    @Test func interpretation() {
        #expect(AuthCheck.interpret(PushResponse(status: 400, reason: .badDeviceToken)).verdict == .accepted)
        #expect(AuthCheck.interpret(PushResponse(status: 400, reason: .topicDisallowed)).verdict == .rejected)
        #expect(AuthCheck.interpret(PushResponse(status: 400, reason: .missingTopic)).verdict == .rejected)
        let forbidden = AuthCheck.interpret(PushResponse(status: 403, reason: .invalidProviderToken))
        #expect(forbidden.verdict == .rejected && forbidden.fix != nil && forbidden.reason == "InvalidProviderToken")
        #expect(AuthCheck.interpret(PushResponse(status: 503, reason: .serviceUnavailable)).verdict == .inconclusive)
        #expect(AuthCheck.interpret(PushResponse(status: 429, reason: .tooManyRequests)).verdict == .inconclusive)
        #expect(AuthCheck.interpret(PushResponse(status: 200)).verdict == .accepted)
    }

    @Test func probeNotificationNotifiesNobody() throws {
        let first = try AuthCheck.probeNotification(topic: "com.example.app")
        let second = try AuthCheck.probeNotification(topic: "com.example.app")
        #expect(first.pushType == .background)
        #expect(first.priority == .powerConsiderate)
        #expect(first.expiration == Date(timeIntervalSince1970: 0))
        #expect(first.topic == "com.example.app")
        #expect(first.deviceToken != second.deviceToken)
        #expect(first.deviceToken.hex.count == 64)
    }

    @Test func preflightReadyOnlyWhenAcceptedAndNothingBlocks() async throws {
        try await RunningGateway.Setup(.sandbox, configure: { $0.deviceRegistry = [:] }).run { running in
            let preflight = PreflightCheck(environment: .sandbox, settings: Self.settings(running))
            let universal = try LoadedCredential(name: "universal", file: try Fixtures.universal())
            let ready = await preflight.check(universal)
            #expect(ready.ready)
            #expect(ready.topic == "com.example.app")
            #expect(ready.authCheck?.verdict == .accepted && ready.error == nil && ready.blockingFinding == nil)

            // Accepted by the gateway, but the credential does not cover the topic about to be pushed.
            var otherTopic = preflight
            otherTopic.topic = "com.other.app"
            let blocked = await otherTopic.check(universal)
            #expect(!blocked.ready)
            #expect(blocked.authCheck?.verdict == .rejected)

            // Blocking finding alone: a production-only certificate against the sandbox.
            let production = await preflight.check(try LoadedCredential(name: "prod", file: try Fixtures.production()))
            #expect(!production.ready)
            #expect(production.blockingFinding?.code.rawValue == "environment_mismatch")
        }
    }

    @Test func preflightOfWhatCannotBeLoadedOrReached() async throws {
        let settings = ConnectionSettings(gateway: "127.0.0.1:1", timeout: 5, processEnvironment: [:])
        let preflight = PreflightCheck(environment: .sandbox, settings: settings)
        let unreachable = await preflight.check(try LoadedCredential(name: "universal", file: try Fixtures.universal()))
        #expect(!unreachable.ready)
        #expect(unreachable.connectionError?.code == .connectionRefused)
        #expect(unreachable.error?.code == .connectionRefused)
        #expect(unreachable.error.map(PreflightCheck.reported) == unreachable.connectionError?.reported)
        #expect(unreachable.error.map(PreflightCheck.reported)?.code == "connection_refused")

        let loader = CredentialLoader(
            store: CredentialStore(root: URL(fileURLWithPath: try Fixtures.temporaryFile("store")))
        )
        let missing = await preflight.check(Fixtures.cert("keys/AuthKey_ABC123DEFG.p8"), loader: loader)
        #expect(
            !missing.ready && missing.error?.message == "A token key file needs its team ID."
                && missing.handshake == nil
        )

        // The JSON report gives the error as the contract's object, and nothing else of it.
        let json = String(decoding: try JSONEncoder().encode(unreachable), as: UTF8.self)
        #expect(json.contains("\"error\"") && !json.contains("connectionError"))
    }
}
