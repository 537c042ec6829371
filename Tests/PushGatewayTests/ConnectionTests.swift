import Foundation
import LocalGateway
import NIOCore
import NIOPosix
import PushStore
import TestSupport
import Testing

@testable import PushGateway

/// One connection for many notifications, the server's stream limit, and every way
/// connecting or sending can fail, each with its own error.
@Suite(.timeLimit(.minutes(2))) struct ConnectionTests {
    @Test func manySendsShareOneConnection() async throws {
        try await RunningGateway.withConnection(.certificate(try Fixtures.universal())) { running, connection in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<60 { group.addTask { try await connection.send(try .alert()).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 60))
            let statistics = running.gateway.statistics
            #expect(statistics.connections == 1)
            #expect(statistics.streams == 60)
            #expect(statistics.accepted == 60)
            #expect(connection.streamsOpened == 60)
        }
    }

    @Test func advertisedLimitOfOneIsNeverExceeded() async throws {
        try await RunningGateway.Setup(configure: {
            $0.faults.maxConcurrentStreams = 1
            $0.faults.latency = 0.02  // keeps each stream open long enough for others to queue behind it
        }).run(connecting: .certificate(try Fixtures.universal())) { running, connection in
            #expect(connection.maxConcurrentStreams == 1)
            #expect(connection.handshakeReport.maxConcurrentStreams == 1)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<12 { group.addTask { try await connection.send(try .alert()).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 12))
            let statistics = running.gateway.statistics
            #expect(statistics.maxConcurrentStreamsObserved == 1)
            #expect(statistics.refusedStreams == 0)
            #expect(statistics.streamLimitViolations == 0)
            #expect(statistics.connections == 1)
        }
    }

    @Test func raisedLimitIsFollowed() async throws {
        try await RunningGateway.Setup(configure: {
            $0.faults.maxConcurrentStreams = 1
            $0.faults.changeMaxConcurrentStreams = (afterAccepted: 2, to: 8)
            $0.faults.latency = 0.2
        }).run(connecting: .certificate(try Fixtures.universal())) { running, connection in
            for _ in 0..<2 { #expect(try await connection.send(try .alert()).status == 200) }
            #expect(connection.maxConcurrentStreams == 8)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { try await connection.send(try .alert()).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            let statistics = running.gateway.statistics
            #expect(statistics.settingsChanges == 1)
            #expect(statistics.maxConcurrentStreamsObserved > 1)
            #expect(statistics.maxConcurrentStreamsObserved <= 8)
            #expect(statistics.refusedStreams == 0)
        }
    }

    /// nginx-style servers answer before reading the body and reset every stream with
    /// NO_ERROR. With swift-nio-http2's default limits (200 RST_STREAM per 30 s) the client
    /// connection dies after about 200 notifications; with ours, a long run goes through.
    @Test func earlyAnswerFollowedByResetIsANormalCompletion() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.answerEarlyAndReset = true }).run(
            connecting: .certificate(try Fixtures.universal())
        ) { running, connection in
            for index in 0..<300 {
                let response = try await connection.send(try .alert())
                #expect(response.status == 200, "notification \(index)")
            }
            #expect(running.gateway.statistics.connections == 1)
            #expect(running.gateway.statistics.accepted == 300)
        }
    }

    @Test func nioDefaultLimitsWouldKillTheSameRun() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.answerEarlyAndReset = true }).run { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal())) {
                $0.http2Limits = .nioDefaults
            }
            defer { Task { await connection.close() } }
            var sent = 0
            let error = await gatewayError {
                for _ in 0..<300 {
                    _ = try await connection.send(try .alert())
                    sent += 1
                }
            }
            #expect(error != nil)
            #expect(sent >= 150 && sent < 300)
        }
    }

    @Test func serverNotListeningIsConnectionRefused() async throws {
        let port = try unusedLoopbackPort()
        let configuration = GatewayConfiguration(endpoint: .custom(host: "127.0.0.1", port: port), credential: .none)
        let connection = GatewayConnection(configuration: configuration)
        let error = await gatewayError { try await connection.connect() }
        #expect(error?.code == .connectionRefused)
        #expect(connection.handshakeReport.failedPhase == "tcp")
    }

    @Test func unknownHostIsDNSFailure() async throws {
        let configuration = GatewayConfiguration(
            endpoint: .custom(host: "no-such-host.invalid", port: 443),
            credential: .none
        )
        let connection = GatewayConnection(configuration: configuration)
        let error = await gatewayError { try await connection.connect() }
        #expect(error?.code == .dnsFailed || error?.code == .dnsTimeout)
        #expect(connection.handshakeReport.failedPhase == "dns")
    }

    @Test func serverWithoutOurCAIsUntrusted() async throws {
        try await RunningGateway.with { running in
            var configuration = try running.configuration(.certificate(try Fixtures.universal()))
            configuration.caFiles = []
            let connection = GatewayConnection(configuration: configuration)
            let error = await gatewayError { try await connection.connect() }
            #expect(error?.code == .tlsUntrusted)
            #expect(error?.hint?.contains("USERTrust RSA Certification Authority") == true)
            let report = connection.handshakeReport
            #expect(report.trust == .untrusted)
            #expect(report.failedPhase == "tls")
            #expect(
                report.serverCertificates.first?.subject.contains("127.0.0.1") == true
                    || report.serverCertificates.first?.subject.contains("localhost") == true
            )
        }
    }

    @Test func certificateForAnotherNameIsHostnameMismatch() async throws {
        try await RunningGateway.Setup(configure: { $0.identity = .generate(names: ["gateway.example.test"]) }).run {
            running in
            let connection = GatewayConnection(
                configuration: try running.configuration(.certificate(try Fixtures.universal()))
            )
            let error = await gatewayError { try await connection.connect() }
            #expect(error?.code == .tlsHostnameMismatch)
            #expect(error?.message.contains("gateway.example.test") == true)
            #expect(connection.handshakeReport.trust == .hostnameMismatch)
        }
    }

    @Test func expiredServerCertificateIsItsOwnError() async throws {
        let authority = try TestCertificateAuthority.generate()
        let expired = try LocalGateway.mintServerIdentity(names: ["127.0.0.1"], days: -1, authority: authority)
        try await RunningGateway.Setup(configure: { $0.identity = .minted(expired) }).run { running in
            let connection = GatewayConnection(
                configuration: try running.configuration(.certificate(try Fixtures.universal()))
            )
            let error = await gatewayError { try await connection.connect() }
            #expect(error?.code == .tlsCertificateExpired)
            #expect(connection.handshakeReport.trust == .expired)
            #expect(error?.hint?.contains("clock") == true)
        }
    }

    @Test func serverThatNeverAnswersTLSTimesOut() async throws {
        // Accepts TCP and then says nothing.
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        var configuration = GatewayConfiguration(
            endpoint: .custom(host: "127.0.0.1", port: silent.localAddress!.port!),
            credential: .none
        )
        configuration.timeouts.tls = 0.5
        let connection = GatewayConnection(configuration: configuration)
        let error = await gatewayError { try await connection.connect() }
        #expect(error?.code == .tlsTimeout)
        #expect(connection.handshakeReport.failedPhase == "tls")
    }

    @Test func clientCertificateFromAnotherCAIsRejectedInTheHandshake() async throws {
        try await RunningGateway.Setup(configure: { $0.tokenKeys = [] }).run { running in
            let stranger = try LocalGateway.mintIdentity(
                topic: "com.example.app",
                environments: [.sandbox],
                keyType: .p256
            )
            let credential = ClientCredential.certificate(
                certificateDER: stranger.certificateDER,
                chainDER: [],
                privateKey: stranger.privateKeyPKCS8
            )
            let connection = GatewayConnection(configuration: running.configuration(credential))
            let error = await gatewayError {
                try await connection.connect()
                _ = try await connection.send(try .alert())  // TLS 1.3 reports the rejection after the handshake
            }
            // The refusal is decoded from the server's TLS alert, whichever side of the handshake it lands on.
            #expect(error?.code == .clientCertificateRejected)
            #expect(error?.message.contains("refused the client certificate") == true)
        }
    }

    @Test func goAwayStopsTheConnectionAndSaysWhy() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.goAwayAfterStreams = 1 }).run(
            connecting: .certificate(try Fixtures.universal())
        ) { running, connection in
            #expect(try await connection.send(try .alert()).status == 200)
            // Wait (bounded) until the GOAWAY has arrived, so the next send must meet it.
            try await eventually { connection.goAway != nil }
            let error = await gatewayError { _ = try await connection.send(try .alert()) }
            #expect(error?.code == .goAway)
            #expect(error?.goAway?.reason == "Shutdown")
            #expect(error?.goAway?.lastStreamID == 1)
            #expect(error?.isRetryable == true)
            #expect(connection.goAway?.reason == "Shutdown")
            #expect(!connection.isUsable)
            #expect(running.gateway.statistics.goAwaysSent == 1)
        }
    }

    @Test func connectionClosedMidRequestIsItsOwnError() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.closeAfterStreams = 1 }).run { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal()))
            defer { Task { await connection.close() } }
            #expect(try await connection.send(try .alert()).status == 200)
            let error = await gatewayError { _ = try await connection.send(try .alert()) }
            // The request was written: the notification may have been delivered, and the error says so.
            #expect(error?.code == .answerLost)
            #expect(error?.message.contains("may have been delivered") == true)
            #expect(error?.isRetryable == false)
            #expect(running.gateway.statistics.connectionsClosedByFault == 1)
            // And the connection says so afterwards, without hanging.
            let after = await gatewayError { _ = try await connection.send(try .alert()) }
            #expect(after?.code == .connectionClosed)
        }
    }

    @Test func requestTimeoutIsReportedNotHung() async throws {
        try await RunningGateway.Setup(configure: { $0.faults.latency = 5 }).run { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal())) {
                $0.timeouts.request = 0.3
            }
            defer { Task { await connection.close() } }
            let error = await gatewayError { _ = try await connection.send(try .alert()) }
            #expect(error?.code == .requestTimeout)
        }
    }

    @Test func connectingByNameWorksWithLocalhost() async throws {
        try await RunningGateway.with { running in
            var configuration = try running.configuration(.certificate(try Fixtures.universal()), host: "localhost")
            configuration.timeouts.connect = 5
            let connection = try await GatewayConnection.connect(configuration)
            defer { Task { await connection.close() } }
            // localhost may resolve to ::1 first, where nothing listens: the next address is tried.
            #expect(try await connection.send(try .alert()).status == 200)
            #expect(connection.handshakeReport.resolvedAddresses.isEmpty == false)
        }
    }
}
