import CredentialFormats
import Foundation

extension Endpoint {
    /// Apple's channel-management service for broadcasts, production: a separate host and port
    /// from the provider API, with the same authentication.
    public static let channelManagementProduction = Endpoint(host: "api-manage-broadcast.push.apple.com", port: 2196)
    /// The same for the sandbox (development) environment.
    public static let channelManagementSandbox = Endpoint(
        host: "api-manage-broadcast.sandbox.push.apple.com",
        port: 2195
    )

    /// Apple's channel-management endpoint for an environment.
    public static func channelManagement(_ environment: PushEnvironment) -> Endpoint {
        environment == .production ? .channelManagementProduction : .channelManagementSandbox
    }
}

extension ConnectionSettings {
    /// The configuration for the channel-management service of `environment`: Apple's
    /// management host and port, unless a gateway was given (a local gateway serves channels and
    /// notifications on one listener); `port` still replaces the port.
    public func channelManagementConfiguration(
        for credential: LoadedCredential,
        environment: PushEnvironment
    ) throws -> Plan {
        var plan = try configuration(for: credential, environment: environment)
        guard gateway == nil else { return plan }
        var endpoint = Endpoint.channelManagement(environment)
        if let port { endpoint.port = port }
        plan.configuration.endpoint = endpoint
        let proxy = try ProxySettings.resolve(explicit: self.proxy, for: endpoint.host, environment: processEnvironment)
        plan.configuration.proxy = proxy?.url
        plan.configuration.proxyOrigin = proxy?.source.description
        plan.proxy = proxy
        return plan
    }
}

/// Channel management and broadcasts over the one connection module: each request is a stream
/// of an established ``GatewayConnection`` (TLS, HTTP/2, the provider token of its credential).
extension GatewayConnection {
    /// Creates a channel for the app; the answer's ``ChannelResponse/channelID`` is the new ID.
    public func createChannel(
        bundleID: String,
        policy: MessageStoragePolicy,
        requestID: UUID? = UUID()
    ) async throws -> ChannelResponse {
        try await channelExchange {
            try $0.create(bundleID: bundleID, policy: policy, requestID: requestID, bearer: $1)
        }
    }

    /// A channel's configuration (message storage policy and push type).
    public func readChannel(bundleID: String, id: ChannelID, requestID: UUID? = UUID()) async throws -> ChannelResponse
    {
        try await channelExchange { try $0.read(bundleID: bundleID, channel: id, requestID: requestID, bearer: $1) }
    }

    /// Deletes a channel; APNs answers 204.
    public func deleteChannel(
        bundleID: String,
        id: ChannelID,
        requestID: UUID? = UUID()
    ) async throws -> ChannelResponse {
        try await channelExchange { try $0.delete(bundleID: bundleID, channel: id, requestID: requestID, bearer: $1) }
    }

    /// The IDs of every channel the app has in this environment.
    public func listChannels(bundleID: String, requestID: UUID? = UUID()) async throws -> ChannelResponse {
        try await channelExchange { try $0.list(bundleID: bundleID, requestID: requestID, bearer: $1) }
    }

    /// Sends a broadcast to every device subscribed to its channel.
    public func broadcast(_ broadcast: BroadcastNotification) async throws -> ChannelResponse {
        try await channelExchange { try $0.broadcast(broadcast, bearer: $1) }
    }

    private func channelExchange(
        _ build: (ChannelRequestEncoder, String?) throws -> ChannelRequestEncoder.Request
    ) async throws -> ChannelResponse {
        let request: ChannelRequestEncoder.Request
        try await prepareToken()
        do {
            request = try build(ChannelRequestEncoder(authority: authority), try bearer())
        } catch let error as PushCoreError {
            throw GatewayError(.invalidNotification, error.message, hint: error.hint)
        }
        let answer = try await exchange(request.headers, body: request.body)
        return ChannelResponse(
            status: answer.status,
            headers: answer.headers,
            body: answer.body,
            latency: answer.latency
        )
    }
}
