import Foundation
import LocalGateway
import PushGateway
import TestSupport
import Testing

/// APNs' connection dynamics as the local gateway plays them, seen from the real client: the
/// stream limit after a rejection and before a valid token, GOAWAY's JSON reasons, and Apple's
/// restricted keys; each with its switch turned off.
struct ConnectionDynamicsTests {
    /// Waits (bounded) for the connection to hear the server's GOAWAY.
    static func waitForGoAway(_ connection: GatewayConnection) async throws {
        try await eventually { connection.goAway != nil }
    }

    @Test func theLimitDropsToOneAfterARejectionAndReturnsAfterAnAcceptedNotification() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.maxConcurrentStreams = 300 }).run(
            connecting: .certificate(try Fixtures.universal())
        ) { running, connection in
            #expect(connection.maxConcurrentStreams == 300)
            let rejected = try await connection.send(try .alert(topic: "com.other.app"))
            #expect(rejected.status == 400)
            #expect(rejected.reason == .topicDisallowed)
            // The SETTINGS went out before the answer: the client holding the answer has the limit.
            #expect(connection.maxConcurrentStreams == 1)
            #expect(try await connection.send(try .alert()).status == 200)
            #expect(connection.maxConcurrentStreams == 300)
            let statistics = running.gateway.statistics
            #expect(statistics.settingsChanges == 2)
            #expect(statistics.maxConcurrentStreamsByLimit.keys.allSatisfy { ["1", "300"].contains($0) })
        }
    }

    @Test func withoutTheRejectionDynamicTheLimitStays() async throws {
        try await RunningGateway.Setup(configure: {
            $0.faults.maxConcurrentStreams = 300
            $0.dynamics.singleStreamAfterRejection = false
        }).run { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal()))
            defer { Task { await connection.close() } }
            #expect(try await connection.send(try .alert(topic: "com.other.app")).status == 400)
            #expect(try await connection.send(try .alert()).status == 200)
            #expect(connection.maxConcurrentStreams == 300)
            #expect(running.gateway.statistics.settingsChanges == 0)
        }
    }

    @Test func aTokenConnectionStartsAtOneStreamUntilAValidToken() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.maxConcurrentStreams = 300 }).run(
            connecting: .token(try Fixtures.providerKey())
        ) { running, token in
            #expect(token.handshakeReport.maxConcurrentStreams == 1)
            #expect(token.maxConcurrentStreams == 1)
            #expect(try await token.send(try .alert()).status == 200)
            #expect(token.maxConcurrentStreams == 300)

            // A certificate needs no warm-up: the gateway knows the client from the handshake.
            let certificate = try await running.connect(.certificate(try Fixtures.universal()))
            defer { Task { await certificate.close() } }
            #expect(certificate.handshakeReport.maxConcurrentStreams == 300)
        }
    }

    @Test func aRejectedTokenKeepsTheConnectionAtOneStream() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.maxConcurrentStreams = 300 }).run { running in
            // Signed for another team: not a valid provider token.
            let connection = try await running.connect(.token(try Fixtures.providerKey(teamID: "ZZZZZ99999")))
            defer { Task { await connection.close() } }
            let answer = try await connection.send(try .alert())
            #expect(answer.reason == .invalidProviderToken)
            #expect(connection.maxConcurrentStreams == 1)
            #expect(running.gateway.statistics.settingsChanges == 0)
        }
    }

    @Test func withoutTheTokenDynamicATokenConnectionStartsAtTheLimit() async throws {
        try await RunningGateway.Setup(configure: {
            $0.faults.maxConcurrentStreams = 300
            $0.dynamics.singleStreamUntilToken = false
        }).run(connecting: .token(try Fixtures.providerKey())) { running, connection in
            #expect(connection.handshakeReport.maxConcurrentStreams == 300)
        }
    }

    @Test func stoppingSendsGoAwayShutdownAfterTheAnswersOwed() async throws {
        let running = try await RunningGateway.start { $0.faults.latency = 0.3 }
        let connection = try await running.connect(.certificate(try Fixtures.universal()))
        defer { Task { await connection.close() } }
        #expect(try await connection.send(try .alert()).status == 200)
        // One request in flight when the gateway stops: it is answered before the close.
        async let inFlight = connection.send(try .alert())
        // Stopped once the gateway has the request's HEADERS: a request that had not reached it
        // would be refused by the GOAWAY, correctly, and this test is about one that had.
        #expect(try await eventually { running.gateway.statistics.streams == 2 })
        let stopped = Task { await running.stop() }
        #expect(try await inFlight.status == 200)
        await stopped.value
        try await Self.waitForGoAway(connection)
        #expect(connection.goAway?.reason == "Shutdown")
        #expect(connection.goAway?.errorCode == "NO_ERROR")
        #expect(connection.goAway?.lastStreamID == 3)
        #expect(running.gateway.statistics.goAwaysSent == 1)
    }

    @Test func withoutGoAwayReasonsTheDebugDataIsEmpty() async throws {
        let running = try await RunningGateway.start { $0.dynamics.goAwayReasons = false }
        let connection = try await running.connect(.certificate(try Fixtures.universal()))
        defer { Task { await connection.close() } }
        #expect(try await connection.send(try .alert()).status == 200)
        await running.stop()
        try await Self.waitForGoAway(connection)
        #expect(connection.goAway != nil)
        #expect(connection.goAway?.reason == nil)
        #expect(connection.goAway?.lastStreamID == 1)
    }

    @Test func anIdleConnectionIsClosedWithIdleTimeoutAndTheClientSaysSo() async throws {
        try await RunningGateway.Setup(configure: { $0.idleTimeout = 0.5 }).run(
            connecting: .certificate(try Fixtures.universal())
        ) { running, connection in
            try await Self.waitForGoAway(connection)
            #expect(connection.goAway?.reason == "IdleTimeout")
            let error = await gatewayError { _ = try await connection.send(try .alert()) }
            #expect(error?.code == .goAway)
            #expect(
                error?.message.contains("APNs closed the connection: IdleTimeout") == true,
                "\(String(describing: error))"
            )
            #expect(error?.isRetryable == true)
            #expect(running.gateway.statistics.idleConnectionsClosed == 1)
        }
    }

    @Test func aConnectionWaitingForAnAnswerIsNotIdle() async throws {
        try await RunningGateway.Setup(configure: {
            $0.idleTimeout = 0.5
            $0.faults.latency = 2
        }).run { running in
            // The client says nothing for several idle periods while it waits for the answer. On
            // a loaded machine the connection may idle before the request arrives: that request
            // was not processed (last stream 0) and is sent again on a new connection; a request
            // processed and then cut off would be the failure.
            var answered = false
            for _ in 0..<5 where !answered {
                let connection = try await running.connect(.certificate(try Fixtures.universal()))
                do {
                    answered = try await connection.send(try .alert()).status == 200
                } catch let error as GatewayError where error.code == .goAway && error.goAway?.lastStreamID == 0 {
                    // Idled before the request: try again.
                }
                await connection.close()
            }
            #expect(answered)
        }
    }

    // MARK: Keys Apple restricts

    static func send(
        topic: String = "com.example.app",
        keyID: String = Fixtures.keyID,
        _ configure: @escaping (inout LocalGateway.Configuration) -> Void
    ) async throws -> PushResponse {
        try await RunningGateway.Setup(configure: configure).run(
            connecting: .token(try Fixtures.providerKey(keyID: keyID))
        ) { running, connection in
            try await connection.send(try .alert(topic: topic))
        }
    }

    static func scoped(
        environment: PushEnvironment? = nil,
        topics: [String] = []
    ) -> (inout LocalGateway.Configuration) -> Void {
        { configuration in
            var key = Fixtures.tokenKey
            key.environment = environment
            key.topics = topics
            configuration.tokenKeys = [key]
        }
    }

    @Test func aKeyRestrictedToTheOtherEnvironmentGetsBadEnvironmentKeyInToken() async throws {
        let refused = try await Self.send(Self.scoped(environment: .production))
        #expect(refused.status == 403)
        #expect(refused.reason == .badEnvironmentKeyInToken)
        #expect(try await Self.send(Self.scoped(environment: .sandbox)).status == 200)
    }

    @Test func aKeyIDKnownOnlyInTheOtherEnvironmentGetsBadEnvironmentKeyIdInToken() async throws {
        let refused = try await Self.send(keyID: "ZZZ999ZZZZ") { $0.otherEnvironmentKeyIDs = ["ZZZ999ZZZZ"] }
        #expect(refused.status == 403)
        #expect(refused.reason == .badEnvironmentKeyIdInToken)
        // A key ID the gateway knows nothing of stays an invalid token.
        #expect(try await Self.send(keyID: "YYY888YYYY") { _ in }.reason == .invalidProviderToken)
    }

    @Test func aTopicSpecificKeyGetsUnrelatedKeyIdInTokenElsewhere() async throws {
        let refused = try await Self.send(topic: "com.other.app", Self.scoped(topics: ["com.example.app"]))
        #expect(refused.status == 403)
        #expect(refused.reason == .unrelatedKeyIdInToken)
        // Its app's derived topics are its own.
        #expect(
            try await Self.send(topic: "com.example.app.voip", Self.scoped(topics: ["com.example.app"])).status == 200
        )
    }

    @Test func withoutKeyScopesEveryKeyServesEverything() async throws {
        let configure: (inout LocalGateway.Configuration) -> Void = { configuration in
            Self.scoped(environment: .production, topics: ["com.example.app"])(&configuration)
            configuration.otherEnvironmentKeyIDs = ["ZZZ999ZZZZ"]
            configuration.dynamics.keyScopes = false
        }
        #expect(try await Self.send(topic: "com.other.app", configure).status == 200)
        #expect(try await Self.send(keyID: "ZZZ999ZZZZ", configure).reason == .invalidProviderToken)
    }
}
