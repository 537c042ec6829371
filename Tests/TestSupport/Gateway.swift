import CredentialFormats
import Foundation
import LocalGateway
import NIOConcurrencyHelpers
import PushGateway
import PushStore
import Testing

/// The fixtures the library tests share: identities, keys and tokens of the test PKI.
public enum Fixtures {
    public static let packageRoot = TestPaths.packageRoot
    public static func cert(_ relative: String) -> String { TestPaths.cert(relative) }
    public static func temporaryPath(_ name: String) throws -> String { try TestPaths.temporaryPath(name) }

    public static let password = SecretBytes("apnsctl-test")
    public static let wwdrCA = cert("ca/wwdr-test-ca.pem")
    public static let teamID = "ABCDE12345"
    public static let keyID = "ABC123DEFG"
    public static let token = try! DeviceToken("740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad")

    /// universal (sandbox + production, topics app/voip/complication).
    public static func universal() throws -> CredentialFile {
        try CredentialFile.read(path: cert("p12/3des-only.p12"), password: .fixed(password))
    }
    /// sandbox only, bundle com.example.app, no topics extension.
    public static func sandbox() throws -> CredentialFile {
        try CredentialFile.read(path: cert("pem/sandbox-bag-attributes.pem"))
    }
    /// production only.
    public static func production() throws -> CredentialFile {
        try CredentialFile.read(path: cert("p12/openssl3-default.p12"), password: .fixed(password))
    }

    public static func providerKey(keyID: String = keyID, teamID: String = teamID) throws -> ProviderKey {
        try ProviderKey(path: cert("keys/AuthKey_ABC123DEFG.p8"), teamID: teamID, keyID: keyID)
    }

    public static var tokenKey: LocalGateway.Configuration.TokenKey {
        let pem = try! String(contentsOfFile: cert("keys/AuthKey_ABC123DEFG.pub.pem"), encoding: .utf8)
        return .init(keyID: keyID, teamID: teamID, publicKeyPEM: pem)
    }

    public static func temporaryFile(_ name: String, contents: String? = nil) throws -> String {
        try TestPaths.temporaryFile(name, contents: contents)
    }

    /// A notification with an alert to the fixture token.
    public static func alert(topic: String = "com.example.app") throws -> PushNotification {
        try PushNotification.alert(topic: topic)
    }
}

/// A started LocalGateway on 127.0.0.1 and what a client needs to reach it.
public struct RunningGateway: Sendable {
    public let gateway: LocalGateway
    public let port: Int
    public let caFile: String

    public static func start(
        _ environment: PushEnvironment = .sandbox,
        _ configure: (inout LocalGateway.Configuration) -> Void = { _ in }
    ) async throws -> RunningGateway {
        var configuration = LocalGateway.Configuration(environment: environment)
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.clientCAFiles = [Fixtures.wwdrCA]
        configuration.tokenKeys = [Fixtures.tokenKey]
        // The suite's in-process bulk runs can hold an event loop for many seconds: a client's
        // handshake may wait its turn longer than the gateway's 30 s default. Tests of the
        // handshake timeout set their own.
        configuration.handshakeTimeout = 120
        configure(&configuration)
        let gateway = try LocalGateway(configuration: configuration)
        let port = try await gateway.start()
        let caFile = try Fixtures.temporaryFile("gateway-ca.pem", contents: gateway.serverCertificateAuthorityPEM ?? "")
        return RunningGateway(gateway: gateway, port: port, caFile: caFile)
    }

    public func configuration(_ credential: ClientCredential, host: String = "127.0.0.1") -> GatewayConfiguration {
        var configuration = GatewayConfiguration(endpoint: .custom(host: host, port: port), credential: credential)
        configuration.caFiles = [caFile]
        // The whole suite runs in parallel on two cores, with bulk runs of a hundred thousand
        // notifications beside these: a handshake may wait its turn. Tests of the timeouts set
        // their own.
        configuration.timeouts.tls = 60
        configuration.timeouts.http2 = 60
        configuration.timeouts.connect = 60
        configuration.timeouts.request = 60
        return configuration
    }

    public func connect(
        _ credential: ClientCredential,
        _ adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayConnection {
        var configuration = configuration(credential)
        adjust(&configuration)
        return try await GatewayConnection.connect(configuration)
    }

    public func stop() async { try? await gateway.stop() }

    /// A gateway to start with a configuration of its own: `Setup { $0.faults.latency = 5 }.run { running in … }`.
    public struct Setup {
        let environment: PushEnvironment
        let configure: (inout LocalGateway.Configuration) -> Void
        public init(
            _ environment: PushEnvironment = .sandbox,
            configure: @escaping (inout LocalGateway.Configuration) -> Void = { _ in }
        ) {
            self.environment = environment
            self.configure = configure
        }
        public func run<R>(_ body: (RunningGateway) async throws -> R) async throws -> R {
            try await RunningGateway.with(environment, configure: configure, body)
        }

        /// `run` with a connection to the gateway made with `credential`, closed when `body` returns.
        public func run<R>(
            connecting credential: ClientCredential,
            _ body: (RunningGateway, GatewayConnection) async throws -> R
        ) async throws -> R {
            try await RunningGateway.with(environment, configure: configure) { running in
                let connection = try await running.connect(credential)
                defer { Task { await connection.close() } }
                return try await body(running, connection)
            }
        }
    }

    /// `with`, and a connection to the gateway made with `credential`, closed when `body` returns.
    public static func withConnection<R>(
        _ credential: ClientCredential,
        environment: PushEnvironment = .sandbox,
        _ body: (RunningGateway, GatewayConnection) async throws -> R
    ) async throws -> R {
        try await Setup(environment).run(connecting: credential, body)
    }

    /// Starts a gateway, runs `body` with it, and stops it before returning, whatever `body` does:
    /// no gateway outlives its test.
    public static func with<R>(
        _ environment: PushEnvironment = .sandbox,
        configure: (inout LocalGateway.Configuration) -> Void = { _ in },
        _ body: (RunningGateway) async throws -> R
    ) async throws -> R {
        let running = try await start(environment, configure)
        do {
            let result = try await body(running)
            await running.stop()
            return result
        } catch {
            await running.stop()
            throw error
        }
    }
}

extension PushNotification {
    public static func alert(topic: String? = "com.example.app", id: UUID? = UUID()) throws -> PushNotification {
        PushNotification(
            deviceToken: Fixtures.token,
            topic: topic,
            pushType: .alert,
            priority: .immediate,
            apnsID: id,
            payload: try Payload.alert(title: "Hello", body: "World", sound: "default", badge: 1)
        )
    }
}

/// A clock tests move by hand.
public final class ManualClock: Sendable {
    private let box: NIOLockedValueBox<Date>
    public init(_ start: Date = Date()) { box = NIOLockedValueBox(start) }
    public func advance(by seconds: TimeInterval) { box.withLockedValue { $0 = $0.addingTimeInterval(seconds) } }
    public var now: Date { box.withLockedValue { $0 } }
    public var clock: GatewayClock { GatewayClock { [self] in now } }
}

/// Runs `body` and returns the GatewayError it throws (recording an issue otherwise).
public func gatewayError(_ body: () async throws -> Void) async -> GatewayError? {
    do {
        try await body()
        Issue.record("expected a GatewayError, got success")
        return nil
    } catch let error as GatewayError {
        return error
    } catch {
        Issue.record("expected a GatewayError, got \(type(of: error)): \(error)")
        return nil
    }
}
