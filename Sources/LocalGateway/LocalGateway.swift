import CredentialFormats
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import PushCore
import PushTransport
import X509

/// An APNs-compatible gateway: HTTP/2 over TLS on a local port, with Apple's headers,
/// reasons, client-certificate and provider-token checks, a device registry, a JSONL log of
/// what it accepted and faults to inject. For tests, demos and users' CI; it never talks to Apple.
///
/// ```swift
/// let gateway = try LocalGateway(configuration: configuration)
/// let port = try await gateway.start()
/// ... // clients connect to 127.0.0.1:port trusting gateway.serverCertificateAuthorityPEM
/// try await gateway.stop()
/// ```
public final class LocalGateway: Sendable {
    struct State {
        var channel: (any Channel)?
        var statistics = Statistics()
        /// The delivery log's writer, from start to the end of stop.
        var log: DeliveryLog?
        var dropTaken = false
        /// Open connections, bounded, for the GOAWAY a stop sends and for the connection a new
        /// one takes the place of at the cap. Its cap is set at start (``connectionCap``).
        var connections = ConnectionTable(cap: Configuration.defaultMaxConnections)
        /// Set by ``stop()``: a connection accepted from now on is closed at once.
        var stopping = false
        /// What each device would show, when followed (``Configuration/display``).
        var display: DeviceDisplay?
        /// Streams open at once over time, when recorded (``Configuration/recordsStreamsInFlight``).
        var streamsInFlight: StreamsInFlight?
    }

    public let configuration: Configuration
    let validator: RequestValidator
    /// Broadcast channels and broadcasts, on the same listener.
    let broadcasts: BroadcastService
    let sslContext: NIOSSLContext
    let group: any EventLoopGroup
    let state = NIOLockedValueBox(State())
    /// Gives closed connections' memory back to the system.
    let memory = MemoryReturn()
    /// The CA that signed a generated server certificate.
    public let serverCertificateAuthorityPEM: String?
    /// The server certificate, PEM.
    public let serverCertificatePEM: String

    /// Reads every file the configuration names and prepares TLS, so mistakes show before start.
    public init(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.configuration = configuration
        self.group = eventLoopGroup
        validator = try RequestValidator(configuration: configuration)
        broadcasts = BroadcastService(validator: validator)

        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        switch configuration.identity {
        case .generate(let names):
            let authority = try TestCertificateAuthority.generate(commonName: "apnsctl local gateway TEST server CA")
            let identity = try LocalGateway.mintServerIdentity(names: names, authority: authority)
            chain = [try NIOSSLCertificate(bytes: identity.certificateDER, format: .der)]
            key = try NIOSSLPrivateKey(bytes: identity.privateKeyPKCS8.bytes, format: .der)
            serverCertificateAuthorityPEM = authority.certificatePEM
            serverCertificatePEM = identity.certificatePEM
        case .minted(let identity):
            chain = [try NIOSSLCertificate(bytes: identity.certificateDER, format: .der)]
            key = try NIOSSLPrivateKey(bytes: identity.privateKeyPKCS8.bytes, format: .der)
            serverCertificateAuthorityPEM = identity.authority.certificatePEM
            serverCertificatePEM = identity.certificatePEM
        case .files(let certificatePath, let keyPath):
            do {
                // Read here, bounded, rather than by swift-nio-ssl, which reads a file to its end.
                chain = try NIOSSLCertificate.fromPEMBytes(try InputFile.read(path: certificatePath, kind: .credential))
                key = try NIOSSLPrivateKey(bytes: try InputFile.read(path: keyPath, kind: .credential), format: .pem)
            } catch let error as CredentialError where error.code == .tooLarge {
                throw error
            } catch {
                throw LocalGatewayError(
                    .invalidIdentity,
                    path: "\(certificatePath), \(keyPath)",
                    "The gateway's certificate or key cannot be read as PEM.",
                    hint: "Give the server certificate PEM and its unencrypted private key PEM."
                )
            }
            serverCertificateAuthorityPEM = nil
            serverCertificatePEM = (try? chain.first.map { PEMWriter.certificate(try $0.toDERBytes()) }) ?? ""
        }

        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        tls.minimumTLSVersion = .tlsv12
        // ALPN h2 for clients that offer it; clients that offer none (aioapns) still get
        // HTTP/2, because the pipeline below speaks nothing else.
        tls.applicationProtocols = ["h2"]
        var clientRoots: [NIOSSLCertificate] = []
        do {
            for path in configuration.clientCAFiles {
                // Read here rather than by swift-nio-ssl, so that a FIFO or /dev/stdin works too.
                clientRoots += try NIOSSLCertificate.fromPEMBytes(
                    try CredentialFile.readBytes(path: path, kind: .caBundle)
                )
            }
            for pem in configuration.clientCAPEMs { clientRoots += try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)) }
        } catch let error as CredentialError where error.code == .tooLarge {
            throw error
        } catch {
            throw LocalGatewayError(
                .invalidClientCA,
                path: configuration.clientCAFiles.joined(separator: ", "),
                "A client CA file cannot be read as PEM certificates.",
                hint:
                    "Give the CA that signed the push identities (certs/ca/wwdr-test-ca.pem, or the one mint-identity wrote)."
            )
        }
        if clientRoots.isEmpty {
            tls.certificateVerification = .none
        } else {
            tls.trustRoots = .certificates(clientRoots)
            // Certificates are verified against the client CAs only; a client name is not a
            // host name. When token keys are accepted too, a client may present no certificate
            // (as with APNs, which takes both on one port).
            tls.certificateVerification =
                configuration.tokenKeys.isEmpty ? .noHostnameVerification : .optionalVerification
        }
        sslContext = try NIOSSLContext(configuration: tls)
    }

    /// Binds and starts accepting; returns the port (the one chosen when the configuration said 0).
    @discardableResult
    public func start() async throws -> Int {
        BlockingWork.installEventLoopDetector { MultiThreadedEventLoopGroup.currentEventLoop != nil }
        if let path = configuration.logFile {
            // What was delivered to whom: for the user's eyes only.
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                let handle = FileHandle(forWritingAtPath: path)
            else {
                throw LocalGatewayError(
                    .logNotWritable,
                    path: path,
                    "The notification log cannot be created.",
                    hint: "Check the folder exists and is writable."
                )
            }
            state.withLockedValue { $0.log = DeliveryLog(handle: handle) }
        }
        let cap = DescriptorBudget.connectionCap(for: configuration.maxConnections)
        let display = configuration.display.map { DeviceDisplay(limits: $0) }
        let streamsInFlight = configuration.recordsStreamsInFlight ? StreamsInFlight(start: .now()) : nil
        state.withLockedValue {
            $0.connections = ConnectionTable(cap: cap)
            $0.display = display
            $0.streamsInFlight = streamsInFlight
        }
        let gateway = self
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try gateway.configureConnection(channel)
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            throw LocalGatewayError(
                .cannotListen,
                "The gateway cannot listen on \(configuration.host):\(configuration.port) (\(UserFacing.describe(error))).",
                hint: "Pick another port, or 0 for any free port."
            )
        }
        state.withLockedValue { $0.channel = channel }
        return channel.localAddress?.port ?? configuration.port
    }

    /// Stops listening and closes every connection, as APNs does: GOAWAY `{"reason":"Shutdown"}`
    /// naming the last stream processed, the answers still owed, then the close (forced after
    /// a grace of two seconds beyond the configured latency).
    public func stop() async throws {
        let channel = state.withLockedValue { state in
            state.stopping = true
            defer { state.channel = nil }
            return state.channel
        }
        try? await channel?.close()
        // Taken once nothing more is accepted: every connection that can still answer is here.
        let connections = state.withLockedValue { $0.connections.all }
        let grace = Int64((2 + configuration.faults.latency) * 1e9)
        for connection in connections {
            connection.pipeline.fireUserInboundEventTriggered(GatewayShutdownEvent())
            connection.eventLoop.scheduleTask(in: .nanoseconds(grace)) { connection.close(promise: nil) }
        }
        for connection in connections { try? await connection.closeFuture.get() }
        // The log closes last: the answers owed while closing are 200s too, and each one's line
        // must be in the file before it goes out. Closing writes every line handed over.
        let log = state.withLockedValue { state in
            defer {
                state.log = nil
                state.connections.removeAll()
            }
            return state.log
        }
        await log?.close()
    }

    /// Starts, then serves until the task is cancelled (for a CLI command).
    public func run(onStart: @Sendable (Int) -> Void = { _ in }) async throws {
        let port = try await start()
        onStart(port)
        let channel = state.withLockedValue { $0.channel }
        await withTaskCancellationHandler {
            try? await channel?.closeFuture.get()
        } onCancel: {
            channel?.close(promise: nil)
        }
        try await stop()
    }

    /// The port bound, once started.
    public var port: Int? { state.withLockedValue { $0.channel?.localAddress?.port } }

    public var statistics: Statistics { state.withLockedValue { $0.statistics } }

    /// Connections open now (accepted and not yet closed).
    public var openConnections: Int { state.withLockedValue { $0.connections.count } }

    /// The most connections held at once: ``Configuration/maxConnections``, or fewer when the
    /// process may not open that many descriptors (known once started).
    public var connectionCap: Int { state.withLockedValue { $0.connections.cap } }

    /// The answer to a notification whose log line could not be written: 503 Shutdown while
    /// the gateway stops, 500 InternalServerError otherwise (a full disk); both may be retried.
    func unrecorded(_ decision: Decision) -> Decision {
        let stopping = state.withLockedValue { $0.stopping }
        let reason: APNsReason = stopping ? .shutdown : .internalServerError
        return Decision(status: stopping ? 503 : 500, reason: reason, apnsID: decision.apnsID, record: nil)
    }

    /// True exactly once: when the gateway's accepted count is about to reach `limit`.
    func takeDrop(atAccepted limit: Int) -> Bool {
        state.withLockedValue { state in
            guard !state.dropTaken, state.statistics.accepted + 1 >= limit else { return false }
            state.dropTaken = true
            return true
        }
    }

    @discardableResult
    func updateStatistics<T>(_ body: (inout Statistics) -> T) -> T {
        state.withLockedValue { body(&$0.statistics) }
    }

    /// Hands one JSON line to the delivery log's writer, which writes it off the event loop; the
    /// future, on `loop`, succeeds once the line is in the file, and the answer waits for it, so a
    /// test that got 200 can read the line. Nil when no log is configured. False when the line
    /// could not be written (a full disk, too many lines waiting, or the gateway stopped): the
    /// notification must not be answered 200.
    func log(_ record: [String: Any], on loop: any EventLoop) -> EventLoopFuture<Bool>? {
        guard configuration.logFile != nil else { return nil }
        let line: [UInt8]
        if let fast = RecordEncoder.line(record) {
            line = fast
        } else {
            guard
                let data = try? JSONSerialization.data(
                    withJSONObject: record,
                    options: [.sortedKeys, .withoutEscapingSlashes]
                )
            else { return loop.makeSucceededFuture(false) }
            line = [UInt8](data) + [0x0A]
        }
        guard let log = state.withLockedValue({ $0.log }) else { return loop.makeSucceededFuture(false) }
        return log.append(line, on: loop)
    }
}
