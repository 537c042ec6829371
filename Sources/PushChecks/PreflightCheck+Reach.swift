import CredentialFormats
import Foundation
import PushGateway
import PushStore

/// What preflight checks besides each credential: the trust store, before anything connects,
/// and APNs' other port when 443 cannot be reached.
extension PreflightCheck {
    /// APNs' port for networks that block 443.
    public static let alternativePort = 2197

    /// The trust-store check for this preflight's environment, when the gateway is Apple's: the
    /// roots in the table are APNs' roots, and mean nothing for a local or custom gateway (whose
    /// anchor each handshake reports instead). Nil for any other gateway.
    public func trustStoreCheck() throws -> TrustStoreCheck? {
        let endpoint = try Endpoint.resolve(environment: environment, port: settings.port, gateway: settings.gateway)
            .endpoint
        guard endpoint.isApple else { return nil }
        return try TrustStoreCheck.run(
            environments: [environment],
            caBundle: settings.caBundle,
            caFiles: settings.caFiles,
            at: date
        )
    }

    /// True when the port is 443 because none was given (neither as a port nor in the gateway
    /// address): then 2197 may be tried when 443 cannot be reached.
    var mayTryAlternativePort: Bool {
        guard settings.port == nil else { return false }
        guard let gateway = settings.gateway else { return true }
        return (try? Endpoint.parse(gateway).port) == nil
    }

    /// Connects (and runs the auth check) on 443; when its TCP connect fails and no port was
    /// asked for, on 2197, and says which worked.
    func probe(
        _ credential: LoadedCredential,
        configuration: GatewayConfiguration,
        topic: String?
    ) async -> (HandshakeCheck, PortFallback?) {
        let first = await HandshakeCheck.run(configuration: configuration, topic: topic, authCheck: true)
        guard first.handshake.failedPhase == "tcp", configuration.proxy == nil, configuration.endpoint.port == 443,
            mayTryAlternativePort, let error = first.error
        else { return (first, nil) }
        var alternative = configuration
        alternative.endpoint.port = Self.alternativePort
        let second = await HandshakeCheck.run(configuration: alternative, topic: topic, authCheck: true)
        let reached = second.handshake.failedPhase != "tcp" && second.handshake.failedPhase != "dns"
        let fallback = PortFallback(
            failedPort: 443,
            failure: error,
            triedPort: Self.alternativePort,
            reached: reached,
            triedFailure: reached ? nil : second.error
        )
        return (reached ? second : first, fallback)
    }
}

/// Port 443 could not be reached over TCP and APNs' other port was tried.
public struct PortFallback: Encodable, Sendable {
    /// 443.
    public var failedPort: Int
    /// Why 443 could not be reached.
    public var failure: GatewayError
    /// 2197.
    public var triedPort: Int
    /// True when a TCP connection to ``triedPort`` was made (the report is then that port's).
    public var reached: Bool
    /// Why ``triedPort`` could not be reached either.
    public var triedFailure: GatewayError?

    /// One line: which port worked.
    public var summary: String {
        reached
            ? "port \(failedPort) unreachable (\(failure.statement)); reached on port \(triedPort)"
            : "port \(failedPort) unreachable, and port \(triedPort) too (\(triedFailure?.statement ?? "no connection"))"
    }
}
