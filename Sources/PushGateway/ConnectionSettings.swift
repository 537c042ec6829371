import CredentialFormats
import Foundation

/// How to reach a gateway, as plain values: which environment, port, gateway address, extra
/// trust roots, proxy and timeout. Turns a credential into a ``GatewayConfiguration``.
public struct ConnectionSettings: Sendable {
    /// The environment asked for; nil lets the credential decide (see ``chooseEnvironment(for:)``).
    public var environment: PushEnvironment?
    /// Replaces the endpoint's port (APNs serves 443 and 2197).
    public var port: Int?
    /// Any other gateway, `HOST[:PORT]` (see ``Endpoint/resolve(environment:port:gateway:)``).
    public var gateway: String?
    /// Extra trust roots (PEM or DER files).
    public var caFiles: [String]
    /// A CA bundle trusted in place of the system's roots (``caFiles`` add to it).
    public var caBundle: String?
    /// Connect over this family only; nil races both (Happy Eyeballs).
    public var addressFamily: AddressFamily?
    /// Addresses to use for a host and port instead of asking DNS.
    public var fixedAddresses: [FixedAddress]
    /// An explicit proxy URL; nil falls back to `HTTPS_PROXY` (see ``ProxySettings/resolve(explicit:for:environment:)``).
    public var proxy: String?
    /// Seconds allowed for each phase (DNS, TCP, TLS, HTTP/2) and for each request.
    public var timeout: Double
    /// The process environment the proxy variables are read from.
    public var processEnvironment: [String: String]

    public init(
        environment: PushEnvironment? = nil,
        port: Int? = nil,
        gateway: String? = nil,
        caFiles: [String] = [],
        caBundle: String? = nil,
        addressFamily: AddressFamily? = nil,
        fixedAddresses: [FixedAddress] = [],
        proxy: String? = nil,
        timeout: Double = 10,
        processEnvironment: [String: String] = ProcessEnvironment.subset(ProxySettings.variables)
    ) {
        self.environment = environment
        self.port = port
        self.gateway = gateway
        self.caFiles = caFiles
        self.caBundle = caBundle
        self.addressFamily = addressFamily
        self.fixedAddresses = fixedAddresses
        self.proxy = proxy
        self.timeout = timeout
        self.processEnvironment = processEnvironment
    }

    /// The environment to use and why it was chosen.
    public struct EnvironmentChoice: Sendable, Equatable {
        public enum Reason: Sendable, Equatable {
            /// The environment was asked for.
            case given
            /// The credential is for this environment only.
            case credentialOnly
            /// Nothing was asked for and the credential is for both environments or for none
            /// known, so sandbox was taken.
            case defaultSandbox
        }

        public var environment: PushEnvironment
        public var reason: Reason
        /// The credential's own environments (empty when unknown).
        public var credentialEnvironments: [PushEnvironment]

        /// "both" or "no known environment", for notes.
        public var credentialDescription: String {
            credentialEnvironments.isEmpty ? "no known environment" : "both"
        }
    }

    /// As asked for; else the credential's single environment; else sandbox.
    public func chooseEnvironment(for credential: LoadedCredential) -> EnvironmentChoice {
        if let environment {
            return EnvironmentChoice(
                environment: environment,
                reason: .given,
                credentialEnvironments: credential.environments
            )
        }
        if credential.environments.count == 1 {
            return EnvironmentChoice(
                environment: credential.environments[0],
                reason: .credentialOnly,
                credentialEnvironments: credential.environments
            )
        }
        return EnvironmentChoice(
            environment: .sandbox,
            reason: .defaultSandbox,
            credentialEnvironments: credential.environments
        )
    }

    /// A configuration ready to connect with, and how it was arrived at.
    public struct Plan: Sendable {
        public var configuration: GatewayConfiguration
        /// The proxy, with where it came from; nil for a direct connection.
        public var proxy: ProxySettings?
        /// One line each, for the user: a legacy host or port mapped to the HTTP/2 API.
        public var notices: [String]
    }

    /// The configuration for connecting with `credential` to `environment`'s gateway (or the
    /// one given). Every phase and every request is bounded by ``timeout``.
    public func configuration(for credential: LoadedCredential, environment: PushEnvironment) throws -> Plan {
        try configuration(for: credential.client, environment: environment)
    }

    /// The same for a bare client credential.
    public func configuration(for client: ClientCredential, environment: PushEnvironment) throws -> Plan {
        let resolution = try Endpoint.resolve(environment: environment, port: port, gateway: gateway)
        var configuration = GatewayConfiguration(endpoint: resolution.endpoint, credential: client)
        configuration.caFiles = caFiles
        configuration.caBundle = caBundle
        configuration.addressFamily = addressFamily
        configuration.fixedAddresses = fixedAddresses
        let proxy = try ProxySettings.resolve(
            explicit: self.proxy,
            for: resolution.endpoint.host,
            environment: processEnvironment
        )
        configuration.proxy = proxy?.url
        configuration.proxyOrigin = proxy?.source.description
        configuration.timeouts.dns = timeout
        configuration.timeouts.connect = timeout
        configuration.timeouts.tls = timeout
        configuration.timeouts.http2 = timeout
        configuration.timeouts.request = timeout
        return Plan(configuration: configuration, proxy: proxy, notices: resolution.notices)
    }
}
