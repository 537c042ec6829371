import CredentialFormats
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import PushGateway
import PushStore
import TestSupport
import Testing
import X509

@testable import LocalGateway

/// Minting push identities in Apple's shape.
@Suite struct MintingTests {
    @Test func universalIdentityHasApplesShape() throws {
        let identity = try LocalGateway.mintIdentity(
            topic: "com.example.minted",
            environments: [.sandbox, .production],
            teamID: "TEAM123456",
            keyType: .p256
        )
        let certificate = try PushCertificate(der: identity.certificateDER)
        #expect(certificate.environments == [.sandbox, .production])
        #expect(certificate.environmentSource == .extensions)
        #expect(certificate.bundleID == "com.example.minted")
        #expect(certificate.teamID == "TEAM123456")
        #expect(certificate.commonName == "Apple Push Services: com.example.minted")
        #expect(
            certificate.topics.map(\.name) == [
                "com.example.minted", "com.example.minted.voip", "com.example.minted.complication",
            ]
        )
        #expect(certificate.isPushCertificate)
        let authority = try PushCertificate(der: identity.authority.certificateDER)
        #expect(certificate.issuer == authority.subject)
    }

    @Test(arguments: [
        (PushEnvironment.sandbox, "Apple Development IOS Push Services: "),
        (.production, "Apple Production IOS Push Services: "),
    ])
    func singleEnvironmentIdentity(_ environment: PushEnvironment, _ prefix: String) throws {
        let identity = try LocalGateway.mintIdentity(
            topic: "com.example.one",
            environments: [environment],
            keyType: .rsa2048
        )
        let certificate = try PushCertificate(der: identity.certificateDER)
        #expect(certificate.environments == [environment])
        #expect(certificate.commonName == prefix + "com.example.one")
        #expect(certificate.topics.isEmpty)
        #expect(certificate.publicKeyType.lowercased().contains("rsa"))
    }

    @Test func pkcs12RoundTripsThroughCredentialFile() throws {
        let identity = try LocalGateway.mintIdentity(topic: "com.example.p12", environments: [.sandbox])
        let bytes = try identity.pkcs12(password: Fixtures.password, friendlyName: "minted")
        let file = try CredentialFile.decode(bytes, path: "minted.p12", password: .fixed(Fixtures.password))
        #expect(file.certificate.der == identity.certificateDER)
        #expect(file.privateKey?.matchesCertificate == true)
        #expect(file.chain.count == 1)
    }

    @Test func emptyTopicOrNoEnvironmentIsAnError() {
        #expect(throws: LocalGatewayError.self) { try LocalGateway.mintIdentity(topic: "", environments: [.sandbox]) }
        #expect(throws: LocalGatewayError.self) { try LocalGateway.mintIdentity(topic: "com.x", environments: []) }
    }
}

/// The gateway itself: identities, logging, counters, and HTTP/2 without ALPN.
@Suite(.timeLimit(.minutes(2))) struct GatewayBehaviourTests {
    /// TestSupport's gateway, with none of its client CAs or token keys unless the test sets them.
    func start(_ configure: (inout LocalGateway.Configuration) -> Void) async throws -> (LocalGateway, Int, String) {
        let running = try await started(configure)
        return (running.gateway, running.port, running.caFile)
    }

    /// The same, as the running gateway a client connects to.
    func started(_ configure: (inout LocalGateway.Configuration) -> Void) async throws -> RunningGateway {
        try await RunningGateway.start(.sandbox) {
            $0.clientCAFiles = []
            $0.tokenKeys = []
            configure(&$0)
        }
    }

    /// TLS that trusts `gateway` and offers `alpn`, then `handlers`, then swift-nio-http2's client
    /// (before TLS finishes, so the server's SETTINGS are not missed); `configure` adds what opens
    /// streams.
    static func connectHTTP2(
        port: Int,
        gateway: LocalGateway,
        alpn: [String] = ["h2"],
        handlers: [any ChannelHandler & Sendable] = [],
        configure: @escaping @Sendable (Channel, NIOHTTP2Handler.StreamMultiplexer) throws -> Void = { _, _ in }
    ) async throws -> (Channel, NIOHTTP2Handler.StreamMultiplexer) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array((gateway.serverCertificateAuthorityPEM ?? "").utf8), format: .pem)
        ])
        tls.applicationProtocols = alpn
        let sslContext = try NIOSSLContext(configuration: tls)
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(
            host: "127.0.0.1",
            port: port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    NIOSSLClientHandler(context: sslContext, serverHostname: "localhost")
                )
                for handler in handlers { try channel.pipeline.syncOperations.addHandler(handler) }
                let multiplexer = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                    mode: .client,
                    connectionConfiguration: .init(),
                    streamConfiguration: .init()
                ) { $0.eventLoop.makeSucceededVoidFuture() }
                try configure(channel, multiplexer)
                return (channel, multiplexer)
            }
        }
    }

    @Test func mintedIdentityIsCheckedAgainstTheGatewayEnvironment() async throws {
        let authority = try TestCertificateAuthority.generate()
        let sandboxOnly = try LocalGateway.mintIdentity(
            topic: "com.example.app",
            environments: [.sandbox],
            keyType: .p256,
            authority: authority
        )
        for (environment, status) in [(PushEnvironment.sandbox, 200), (.production, 403)] {
            let running = try await started {
                $0.environment = environment
                $0.clientCAPEMs = [authority.certificatePEM]
            }
            let connection = try await running.connect(
                .certificate(
                    certificateDER: sandboxOnly.certificateDER,
                    chainDER: [],
                    privateKey: sandboxOnly.privateKeyPKCS8
                )
            )
            let response = try await connection.send(try Fixtures.alert())
            #expect(response.status == status, "\(environment)")
            if status == 403 { #expect(response.reason == .badCertificateEnvironment) }
            await connection.close()
            try await running.gateway.stop()
        }
    }

    @Test func serverIdentityFromPEMFilesOfTheTestPKI() async throws {
        let running = try await started {
            $0.identity = .files(
                certificate: Fixtures.cert("gateway/server.pem"),
                privateKey: Fixtures.cert("gateway/server.key")
            )
            $0.clientCAFiles = [Fixtures.cert("ca/wwdr-test-ca.pem")]
        }
        defer { Task { await running.stop() } }
        #expect(running.gateway.serverCertificateAuthorityPEM == nil)
        var configuration = running.configuration(try .certificate(try Fixtures.universal()), host: "localhost")
        configuration.caFiles = [Fixtures.cert("ca/gateway-test-ca.pem")]
        configuration.trustSystemRoots = false
        let connection = try await GatewayConnection.connect(configuration)
        defer { Task { await connection.close() } }
        #expect(try await connection.send(try Fixtures.alert()).status == 200)
        #expect(connection.handshakeReport.trustSource == .custom)
        #expect(connection.handshakeReport.serverCertificates.first?.subject.contains("localhost") == true)
    }

    @Test func acceptedNotificationsAreLoggedWithoutTheToken() async throws {
        let log = try Fixtures.temporaryPath("notifications.jsonl")
        let running = try await started {
            $0.logFile = log
            $0.tokenKeys = [Fixtures.tokenKey]
        }
        let gateway = running.gateway
        defer { Task { await running.stop() } }
        let key = try ProviderKey(path: Fixtures.cert("keys/AuthKey_ABC123DEFG.p8"), teamID: "ABCDE12345")
        let connection = try await running.connect(.token(key))
        defer { Task { await connection.close() } }
        var ids: [String] = []
        for index in 0..<3 {
            var notification = try Fixtures.alert()
            notification.payload = try Payload.alert(body: "message \(index)")
            notification.collapseID = "c\(index)"
            let response = try await connection.send(notification)
            #expect(response.status == 200)
            ids.append(try #require(response.apnsID).uuidString.lowercased())
        }
        // A rejected one is counted, not logged.
        let rejected = try await connection.send(try Fixtures.alert(topic: ""))
        #expect(rejected.reason == .missingTopic)

        let text = try String(contentsOfFile: log, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        for (index, line) in lines.enumerated() {
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["apns_id"] as? String == ids[index])
            #expect(object["device_token"] as? String == Fixtures.token.hex)
            #expect(object["auth"] as? String == "token")
            #expect(object["key_id"] as? String == "ABC123DEFG")
            let headers = try #require(object["headers"] as? [String: String])
            #expect(headers["apns-collapse-id"] == "c\(index)")
            #expect(headers["authorization"] == nil)
            let payload = try #require(object["payload"] as? [String: Any])
            let alert = (payload["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(alert?["body"] as? String == "message \(index)")
        }
        #expect(!text.lowercased().contains("bearer"))
        let jwtSignature = String(try key.makeJWT().split(separator: ".")[0])
        #expect(!text.contains(jwtSignature))

        let statistics = gateway.statistics
        #expect(statistics.accepted == 3)
        #expect(statistics.rejected == ["MissingTopic": 1])
        #expect(statistics.connections == 1)
    }

    @Test func clientWithoutALPNStillGetsHTTP2() async throws {
        let (gateway, port, _) = try await start { _ in }
        defer { Task { try? await gateway.stop() } }
        let negotiated = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: String?.self)
        // As aioapns: no ALPN extension at all.
        let (channel, multiplexer) = try await Self.connectHTTP2(
            port: port,
            gateway: gateway,
            alpn: [],
            handlers: [ALPNRecorder(promise: negotiated)]
        )
        defer { channel.close(promise: nil) }
        #expect(try await negotiated.futureResult.get() == nil)

        let response = channel.eventLoop.makePromise(of: (Int, String).self)
        _ = try await multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(
                    OneRequest(path: "/3/device/\(Fixtures.token.hex)", response: response)
                )
            }
        }.get()
        let (status, body) = try await response.futureResult.get()
        // No credential at all: APNs' answer, over HTTP/2.
        #expect(status == 403)
        #expect(body.contains("MissingProviderToken"))
    }

    /// A client that opens streams before it has read the gateway's SETTINGS exceeds the
    /// advertised limit; the gateway refuses the extra streams (RST_STREAM REFUSED_STREAM, or
    /// swift-nio-http2's PROTOCOL_ERROR once the limit is acknowledged) and never serves more
    /// than the limit at once.
    @Test func streamsAboveTheAdvertisedLimitAreRefused() async throws {
        let (gateway, port, _) = try await start {
            $0.faults.maxConcurrentStreams = 1
            $0.faults.latency = 0.2
        }
        defer { Task { try? await gateway.stop() } }
        // Three requests queued when the connection becomes active, in the same event-loop tick
        // that sends the ClientHello: they are committed before any byte from the gateway,
        // so before its SETTINGS, can be read.
        let answers = (0..<3).map { _ in MultiThreadedEventLoopGroup.singleton.any().makePromise(of: (Int, String).self)
        }
        let (channel, _) = try await Self.connectHTTP2(port: port, gateway: gateway) { channel, multiplexer in
            try channel.pipeline.syncOperations.addHandler(StreamOpener(multiplexer: multiplexer, responses: answers))
        }
        defer { channel.close(promise: nil) }
        var answered = 0
        for answer in answers where (try? await answer.futureResult.get()) != nil { answered += 1 }
        let statistics = gateway.statistics
        #expect(answered >= 1)
        #expect(statistics.refusedStreams >= 1)
        #expect(statistics.streamLimitViolations == 0)
        // Every stream was either answered or refused, never both, never neither.
        #expect(answered + statistics.refusedStreams == 3)
        #expect(statistics.rejectedTotal + statistics.accepted == answered)
    }

    @Test func startReportsTheBoundPortAndStopFreesIt() async throws {
        let (gateway, port, _) = try await start { _ in }
        #expect(port > 0)
        #expect(gateway.port == port)
        try await gateway.stop()
        #expect(gateway.port == nil)
        let configuration = GatewayConfiguration(endpoint: .custom(host: "127.0.0.1", port: port), credential: .none)
        await #expect(throws: GatewayError.self) { try await GatewayConnection.connect(configuration) }
    }

    @Test func registryFileWithABadTokenIsAClearError() throws {
        let path = try Fixtures.temporaryFile(
            "registry.json",
            contents: #"{"xyz": {"topic": "com.example.app", "environment": "sandbox"}}"#
        )
        var configuration = LocalGateway.Configuration()
        configuration.deviceRegistryFile = path
        let error = #expect(throws: LocalGatewayError.self) { try LocalGateway(configuration: configuration) }
        #expect(error?.message.contains("'x'") == true)
    }
}

/// Opens one request stream per promise as soon as the connection is active.
final class StreamOpener: ChannelInboundHandler {
    typealias InboundIn = Any
    let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    let responses: [EventLoopPromise<(Int, String)>]
    init(multiplexer: NIOHTTP2Handler.StreamMultiplexer, responses: [EventLoopPromise<(Int, String)>]) {
        self.multiplexer = multiplexer
        self.responses = responses
    }
    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        for response in responses {
            multiplexer.createStreamChannel(promise: nil) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(
                        OneRequest(path: "/3/device/\(Fixtures.token.hex)", response: response)
                    )
                }
            }
        }
    }
}

/// Records the ALPN result of the handshake.
final class ALPNRecorder: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    let promise: EventLoopPromise<String?>
    init(promise: EventLoopPromise<String?>) { self.promise = promise }
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            promise.succeed(negotiated)
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Sends one POST with a small payload and reports the status and body.
final class OneRequest: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload
    let path: String
    let response: EventLoopPromise<(Int, String)>
    var status = 0
    var body = ""

    init(path: String, response: EventLoopPromise<(Int, String)>) {
        self.path = path
        self.response = response
    }

    func channelActive(context: ChannelHandlerContext) {
        let headers = HPACKHeaders([
            (":method", "POST"), (":scheme", "https"), (":path", path), (":authority", "localhost"),
            ("apns-topic", "com.example.app"),
        ])
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        let payload = context.channel.allocator.buffer(string: #"{"aps":{"alert":"hi"}}"#)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(payload), endStream: true))), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            status = headers.headers.first(name: ":status").flatMap { Int($0) } ?? 0
            if headers.endStream { response.succeed((status, body)) }
        case .data(let data):
            if case .byteBuffer(var buffer) = data.data {
                body += buffer.readString(length: buffer.readableBytes) ?? ""
            }
            if data.endStream { response.succeed((status, body)) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        response.fail(ChannelError.eof)  // ignored when the answer already came
    }
}

/// The validator reads a request's headers in one pass; it must see every header of
/// ``RequestValidator/singleHeaders`` given twice, and nothing else as a repeat.
@Suite struct NotificationHeadersTests {
    @Test func everySingleHeaderGivenTwiceIsADuplicate() {
        let base: [(name: String, value: String)] = [
            (":method", "POST"), (":path", "/3/device/ab"), (":scheme", "https"), (":authority", "localhost"),
            (APNsHeader.topic, "com.example.app"),
        ]
        #expect(!NotificationHeaders(base).duplicated)
        for name in RequestValidator.singleHeaders {
            var headers = base
            headers.append((name, "1"))
            headers.append((name, "2"))
            let fields = NotificationHeaders(headers)
            #expect(fields.duplicated, "\(name) twice")
        }
        let repeatable = base + [("x-custom", "1"), ("x-custom", "2")]
        #expect(!NotificationHeaders(repeatable).duplicated)
    }

    @Test func theFirstValueOfEachHeaderIsTaken() {
        let fields = NotificationHeaders([
            (":method", "POST"), (":path", "/3/device/ab"), (APNsHeader.topic, "first"), (APNsHeader.topic, "second"),
            (APNsHeader.pushType, "background"), (APNsHeader.priority, "5"), (APNsHeader.expiration, "0"),
            (APNsHeader.collapseID, "c"), (APNsHeader.id, "i"), (APNsHeader.authorization, "bearer t"),
        ])
        #expect(fields.method == "POST")
        #expect(fields.path == "/3/device/ab")
        #expect(fields.topic == "first")
        #expect(fields.pushType == "background")
        #expect(fields.priority == "5")
        #expect(fields.expiration == "0")
        #expect(fields.collapseID == "c")
        #expect(fields.id == "i")
        #expect(fields.authorization == "bearer t")
    }
}
