import Foundation
import LocalGateway
import NIOConcurrencyHelpers
import PushCredentials
import Testing

@testable import PushGateway

/// Paths and fixtures, found from this file's location so that they work from any checkout.
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func cert(_ relative: String) -> String {
        packageRoot.appendingPathComponent("certs").appendingPathComponent(relative).path
    }

    static let password = SecretBytes("apnsctl-test")
    static let wwdrCA = cert("ca/wwdr-test-ca.pem")
    static let teamID = "ABCDE12345"
    static let keyID = "ABC123DEFG"
    static let token = try! DeviceToken("740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad")

    /// universal (sandbox + production, topics app/voip/complication).
    static func universal() throws -> CredentialFile {
        try CredentialFile.read(path: cert("p12/3des-only.p12"), password: .fixed(password))
    }
    /// sandbox only, bundle com.example.app, no topics extension.
    static func sandbox() throws -> CredentialFile {
        try CredentialFile.read(path: cert("pem/sandbox-bag-attributes.pem"))
    }
    /// production only.
    static func production() throws -> CredentialFile {
        try CredentialFile.read(path: cert("p12/openssl3-default.p12"), password: .fixed(password))
    }

    static func providerKey(keyID: String = keyID, teamID: String = teamID) throws -> ProviderKey {
        try ProviderKey(path: cert("keys/AuthKey_ABC123DEFG.p8"), teamID: teamID, keyID: keyID)
    }

    static var tokenKey: LocalGateway.Configuration.TokenKey {
        let pem = try! String(contentsOfFile: cert("keys/AuthKey_ABC123DEFG.pub.pem"), encoding: .utf8)
        return .init(keyID: keyID, teamID: teamID, publicKeyPEM: pem)
    }

    static func temporaryFile(_ name: String, contents: String? = nil) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(name).path
        if let contents { try contents.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }
}

/// A started LocalGateway on 127.0.0.1 and what a client needs to reach it.
struct RunningGateway {
    let gateway: LocalGateway
    let port: Int
    let caFile: String

    static func start(
        _ environment: PushEnvironment = .sandbox,
        _ configure: (inout LocalGateway.Configuration) -> Void = { _ in }
    ) async throws -> RunningGateway {
        var configuration = LocalGateway.Configuration(environment: environment)
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.clientCAFiles = [Fixtures.wwdrCA]
        configuration.tokenKeys = [Fixtures.tokenKey]
        configure(&configuration)
        let gateway = try LocalGateway(configuration: configuration)
        let port = try await gateway.start()
        let caFile = try Fixtures.temporaryFile("gateway-ca.pem", contents: gateway.serverCertificateAuthorityPEM ?? "")
        return RunningGateway(gateway: gateway, port: port, caFile: caFile)
    }

    func configuration(_ credential: ClientCredential, host: String = "127.0.0.1") -> GatewayConfiguration {
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

    func connect(
        _ credential: ClientCredential,
        _ adjust: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayConnection {
        var configuration = configuration(credential)
        adjust(&configuration)
        return try await GatewayConnection.connect(configuration)
    }

    func stop() async { try? await gateway.stop() }
}

extension PushNotification {
    static func alert(topic: String? = "com.example.app", id: UUID? = UUID()) throws -> PushNotification {
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
final class ManualClock: Sendable {
    private let box: NIOLockedValueBox<Date>
    init(_ start: Date = Date()) { box = NIOLockedValueBox(start) }
    func advance(by seconds: TimeInterval) { box.withLockedValue { $0 = $0.addingTimeInterval(seconds) } }
    var now: Date { box.withLockedValue { $0 } }
    var clock: GatewayClock { GatewayClock { [self] in now } }
}

/// Runs `body` and returns the GatewayError it throws (recording an issue otherwise).
func gatewayError(_ body: () async throws -> Void) async -> GatewayError? {
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
