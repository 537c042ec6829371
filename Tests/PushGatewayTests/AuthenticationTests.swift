import Foundation
import LocalGateway
import PushStore
import TestSupport
import Testing

@testable import PushGateway

/// Certificate and token authentication end to end: real TLS and HTTP/2 on 127.0.0.1.
@Suite(.timeLimit(.minutes(2))) struct AuthenticationTests {
    @Test(arguments: [PushEnvironment.sandbox, .production])
    func certificateAuthenticationIsAccepted(_ environment: PushEnvironment) async throws {
        try await RunningGateway.withConnection(.certificate(try Fixtures.universal()), environment: environment) {
            running,
            connection in
            let id = UUID()
            let response = try await connection.send(try .alert(id: id))
            #expect(response.status == 200)
            #expect(response.apnsID == id)
            #expect(response.reason == nil)
            // apns-unique-id exists only in the sandbox, as with APNs.
            #expect((response.apnsUniqueID != nil) == (environment == .sandbox))
            let report = connection.handshakeReport
            #expect(report.alpn == "h2")
            #expect(report.trust == .trusted)
            #expect(report.serverCertificates.count == 1)
            #expect(report.tlsVersion == "TLSv1.3" || report.tlsVersion == "TLSv1.2")
            #expect(report.maxConcurrentStreams == 1000)
            #expect(report.serverSettings["SETTINGS_MAX_CONCURRENT_STREAMS"] == 1000)
            #expect(
                report.dnsDuration != nil && report.tcpConnectDuration != nil && report.tlsHandshakeDuration != nil
                    && report.http2ReadyDuration != nil
            )
            #expect(report.resolvedAddress == "127.0.0.1:\(running.port)")
            #expect(running.gateway.statistics.accepted == 1)
        }
    }

    @Test(arguments: [PushEnvironment.sandbox, .production])
    func tokenAuthenticationIsAccepted(_ environment: PushEnvironment) async throws {
        try await RunningGateway.withConnection(.token(try Fixtures.providerKey()), environment: environment) {
            running,
            connection in
            let response = try await connection.send(try .alert())
            #expect(response.status == 200)
            #expect(response.apnsID != nil)
            #expect((response.apnsUniqueID != nil) == (environment == .sandbox))
        }
    }

    @Test func sandboxCertificateAgainstProductionGatewayIsBadCertificateEnvironment() async throws {
        try await RunningGateway.withConnection(.certificate(try Fixtures.sandbox()), environment: .production) {
            running,
            connection in
            let response = try await connection.send(try .alert())
            #expect(response.status == 403)
            #expect(response.reason == .badCertificateEnvironment)
            #expect(response.reason?.explanation.contains("other environment") == true)
        }
    }

    @Test func productionCertificateWorksOnlyInProduction() async throws {
        for (environment, status) in [(PushEnvironment.production, 200), (.sandbox, 403)] {
            let running = try await RunningGateway.start(environment)
            let connection = try await running.connect(.certificate(try Fixtures.production()))
            let response = try await connection.send(try .alert())
            #expect(response.status == status, "\(environment)")
            await connection.close()
            await running.stop()
        }
    }

    @Test func topicTheCertificateDoesNotCoverIsDisallowed() async throws {
        try await RunningGateway.withConnection(.certificate(try Fixtures.universal())) { running, connection in
            let response = try await connection.send(try .alert(topic: "com.other.app"))
            #expect(response.status == 400)
            #expect(response.reason == .topicDisallowed)
            // A topic from the certificate's topics extension is allowed.
            var voip = try PushNotification.alert(topic: "com.example.app.voip")
            voip.pushType = .voip
            #expect(try await connection.send(voip).status == 200)
        }
    }

    /// As APNs: a push type with a topic of its own is not delivered to the bare bundle ID, even
    /// with a certificate that covers both.
    @Test func aPushTypeNeedsItsTopicSuffix() async throws {
        try await RunningGateway.withConnection(.certificate(try Fixtures.universal())) { running, connection in
            var bare = try PushNotification.alert(topic: "com.example.app")
            bare.pushType = .voip
            let refused = try await connection.send(bare)
            #expect(refused.status == 400)
            #expect(refused.reason == .topicDisallowed)
            var suffixed = try PushNotification.alert(topic: "com.example.app.voip")
            suffixed.pushType = .voip
            #expect(try await connection.send(suffixed).status == 200)
            // alert and background go to the bundle ID itself.
            #expect(try await connection.send(try .alert(topic: "com.example.app")).status == 200)
        }
    }

    @Test func missingTopicDefaultsOnlyForSingleTopicCertificates() async throws {
        let log = try Fixtures.temporaryFile("log.jsonl")
        try await RunningGateway.Setup(configure: { $0.logFile = log }).run { running in
            // sandbox.pem covers one topic (its bundle ID): APNs uses it.
            let single = try await running.connect(.certificate(try Fixtures.sandbox()))
            #expect(try await single.send(try .alert(topic: nil)).status == 200)
            await single.close()
            let line = try #require(String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").first)
            #expect(line.contains(#""topic":"com.example.app""#))
            // universal covers three: no default.
            let several = try await running.connect(.certificate(try Fixtures.universal()))
            let response = try await several.send(try .alert(topic: nil))
            #expect(response.status == 400)
            #expect(response.reason == .missingTopic)
            await several.close()
        }
    }

    @Test func noCredentialIsMissingProviderToken() async throws {
        try await RunningGateway.withConnection(.none) { running, connection in
            let response = try await connection.send(try .alert())
            #expect(response.status == 403)
            #expect(response.reason == .missingProviderToken)
        }
    }

    @Test func tokenWithUnknownKeyWrongTeamOrForeignSignatureIsInvalid() async throws {
        try await RunningGateway.with { running in
            let foreign = try ProviderKey(keyID: Fixtures.keyID, teamID: Fixtures.teamID, privateKey: .init())
            for key in [
                try Fixtures.providerKey(keyID: "ZZZZZZZZZZ"), try Fixtures.providerKey(teamID: "TEAM999999"), foreign,
            ] {
                let connection = try await running.connect(.token(key))
                let response = try await connection.send(try .alert())
                #expect(response.status == 403)
                #expect(response.reason == .invalidProviderToken)
                await connection.close()
            }
        }
    }

    @Test func tokenIssuedMoreThanAnHourAgoIsExpired() async throws {
        try await RunningGateway.with { running in
            let clock = ManualClock(Date().addingTimeInterval(-2 * 3_600))
            let connection = try await running.connect(.token(try Fixtures.providerKey())) { $0.clock = clock.clock }
            defer { Task { await connection.close() } }
            let response = try await connection.send(try .alert())
            #expect(response.status == 403)
            #expect(response.reason == .expiredProviderToken)
        }
    }

    /// A token issued 31 years ahead would never expire: refused as APNs refuses a token it
    /// cannot accept. A client clock 30 s fast is ordinary skew: accepted.
    @Test func tokenIssuedFarAheadIsInvalidButClockSkewIsAccepted() async throws {
        try await RunningGateway.with { running in
            for (ahead, status) in [(31 * 365.25 * 86_400, 403), (30.0, 200)] {
                let clock = ManualClock(Date().addingTimeInterval(ahead))
                let connection = try await running.connect(.token(try Fixtures.providerKey())) {
                    $0.clock = clock.clock
                }
                let response = try await connection.send(try .alert())
                #expect(response.status == status, "a token issued \(ahead) s ahead")
                if status == 403 { #expect(response.reason == .invalidProviderToken) }
                await connection.close()
            }
        }
    }

    @Test func tokenIsCachedAndRenewedAfterFiftyMinutes() throws {
        let clock = ManualClock()
        let cache = ProviderTokenCache(key: try Fixtures.providerKey(), clock: clock.clock)
        let first = try cache.token()
        clock.advance(by: 49 * 60)
        #expect(try cache.token() == first)
        #expect(cache.tokensMade == 1)
        clock.advance(by: 2 * 60)
        let second = try cache.token()
        #expect(second != first)
        #expect(cache.tokensMade == 2)
        // A clock that went backwards makes a new token rather than reusing one "from the future".
        clock.advance(by: -3_600)
        #expect(try cache.token() != second)
    }

    @Test func secretsStayOutOfErrorsAndReports() async throws {
        try await RunningGateway.with { running in
            let key = try Fixtures.providerKey()
            let connection = try await running.connect(.token(key))
            _ = try await connection.send(try .alert())
            await connection.close()
            let report = String(decoding: try JSONEncoder().encode(connection.handshakeReport), as: UTF8.self)
            let jwt = try key.makeJWT()
            let header = String(jwt.split(separator: ".")[0])
            #expect(!report.contains(header))
            let error = await gatewayError { _ = try await connection.send(try .alert()) }
            #expect(error?.description.contains("bearer") == false)
        }
    }
}
