import CredentialFormats
import Foundation
import LocalGateway
import PushChecks
import PushCore
import PushGateway
import TestSupport
import Testing

/// A connection started before its credential is known (`send`'s, while its options are parsed)
/// against a real local gateway: taken over by the send with the same settings, so the gateway
/// sees one connection and the token key it was given; left alone by a send with other settings;
/// never taken by a client certificate; closed when nobody takes it, or at once when dropped.
@Suite(.serialized)
struct ConnectAheadTests {
    static func settings(_ running: RunningGateway) -> ConnectionSettings {
        ConnectionSettings(gateway: "127.0.0.1:\(running.port)", caFiles: [running.caFile], processEnvironment: [:])
    }

    @Test func theSendWithTheSameSettingsTakesItOver() async throws {
        try await RunningGateway.with { running in
            let settings = Self.settings(running)
            GatewayConnection.connectAhead(try settings.configuration(for: .none, environment: .sandbox).configuration)
            #expect(try await eventually { running.gateway.statistics.connections == 1 })
            let key = ClientCredential.token(try Fixtures.providerKey())
            let configuration = try settings.configuration(for: key, environment: .sandbox).configuration
            let response = try await GatewayConnection.withConnection(configuration) { connection in
                #expect(connection.handshakeReport.tlsVersion != nil)
                return try await connection.send(try .alert())
            }
            // Sent with the key given after the handshake, on the connection made before it.
            #expect(response.status == 200)
            #expect(try await eventually { running.gateway.openConnections == 0 })
            #expect(running.gateway.statistics.connections == 1)
        }
    }

    @Test func aSendWithOtherSettingsConnectsAgainAndTheUnclaimedOneIsClosed() async throws {
        try await RunningGateway.with { running in
            var guessed = Self.settings(running)
            guessed.timeout = 5
            GatewayConnection.connectAhead(try guessed.configuration(for: .none, environment: .sandbox).configuration)
            #expect(try await eventually { running.gateway.statistics.connections == 1 })
            let key = ClientCredential.token(try Fixtures.providerKey())
            let configuration = try Self.settings(running).configuration(for: key, environment: .sandbox).configuration
            let response = try await GatewayConnection.withConnection(configuration) { try await $0.send(try .alert()) }
            #expect(response.status == 200)
            #expect(running.gateway.statistics.connections == 2)
            // The guessed one, never taken, is closed once its time is up.
            #expect(
                try await eventually(timeout: GatewayConnection.unclaimedLifetime + 20) {
                    running.gateway.openConnections == 0
                }
            )
        }
    }

    @Test func aClientCertificateNeverTakesItOver() async throws {
        try await RunningGateway.with { running in
            let settings = Self.settings(running)
            GatewayConnection.connectAhead(try settings.configuration(for: .none, environment: .sandbox).configuration)
            #expect(try await eventually { running.gateway.statistics.connections == 1 })
            let certificate = try ClientCredential.certificate(try Fixtures.sandbox())
            let configuration = try settings.configuration(for: certificate, environment: .sandbox).configuration
            let response = try await GatewayConnection.withConnection(configuration) { try await $0.send(try .alert()) }
            #expect(response.status == 200)
            #expect(running.gateway.statistics.connections == 2)
        }
    }

    /// A program that learns early that it will not connect that way (`send`'s credential is a
    /// certificate) drops the connection: closed at once, not after ``unclaimedLifetime``, and
    /// the send that follows connects anew.
    @Test func aDroppedConnectionIsClosedAtOnce() async throws {
        try await RunningGateway.with { running in
            let settings = Self.settings(running)
            GatewayConnection.connectAhead(try settings.configuration(for: .none, environment: .sandbox).configuration)
            #expect(try await eventually { running.gateway.openConnections == 1 })
            GatewayConnection.dropAhead()
            #expect(
                try await eventually(timeout: GatewayConnection.unclaimedLifetime / 2) {
                    running.gateway.openConnections == 0
                }
            )
            let key = ClientCredential.token(try Fixtures.providerKey())
            let configuration = try settings.configuration(for: key, environment: .sandbox).configuration
            let response = try await GatewayConnection.withConnection(configuration) { try await $0.send(try .alert()) }
            #expect(response.status == 200)
            #expect(running.gateway.statistics.connections == 2)
        }
    }

    /// A gateway that is not there: the connection made ahead fails, and the send's own attempt
    /// is what reports it.
    @Test func aFailedConnectionIsNobodysError() async throws {
        let port = try unusedLoopbackPort()
        let settings = ConnectionSettings(gateway: "127.0.0.1:\(port)", processEnvironment: [:])
        GatewayConnection.connectAhead(try settings.configuration(for: .none, environment: .sandbox).configuration)
        let key = ClientCredential.token(try Fixtures.providerKey())
        let configuration = try settings.configuration(for: key, environment: .sandbox).configuration
        let error = await #expect(throws: GatewayError.self) {
            try await GatewayConnection.withConnection(configuration) { try await $0.send(try .alert()) }
        }
        #expect(error?.code == .connectionRefused)
    }

    /// `send` starts its connection before it knows the credential (`GatewayConnection.connectAhead`,
    /// with the one-exchange configuration) and the plan's send takes it over: one connection in
    /// all, and a configuration made for one exchange sends no PINGs.
    @Test func aPlansSendTakesOverTheConnectionStartedAheadForIt() async throws {
        try await RunningGateway.with { running in
            let settings = Self.settings(running)
            let ahead = try settings.configuration(for: .none, environment: .sandbox).configuration
            #expect(ahead.keepAlive != nil && ahead.forOneExchange.keepAlive == nil)
            GatewayConnection.connectAhead(ahead.forOneExchange)
            #expect(try await eventually { running.gateway.statistics.connections == 1 })
            let key = LoadedCredential(name: "AuthKey_ABC123DEFG.p8", key: try Fixtures.providerKey())
            let plan = try GatewayPlan(key, settings: settings, topic: "com.example.app")
            let response = try await plan.send(try .alert(topic: plan.topic))
            #expect(response.status == 200)
            #expect(try await eventually { running.gateway.openConnections == 0 })
            #expect(running.gateway.statistics.connections == 1)
        }
    }
}
