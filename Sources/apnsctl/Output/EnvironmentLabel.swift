import PushGateway

extension SendOutput {
    /// The environment as far as the answer tells it. Apple's hosts are what their names say. Any
    /// other server (`--gateway`) may play either: a sandbox gives itself away by sending
    /// `apns-unique-id`, which production never sends; without it the environment is the one
    /// asked for, and the label says it is assumed rather than seen.
    var environmentLabel: String {
        let host = gateway.split(separator: ":").first.map(String.init) ?? gateway
        if Endpoint(host: host, port: 443).environment != nil { return environment.rawValue }
        if response.apnsUniqueID != nil {
            return environment == .sandbox
                ? "sandbox, as its apns-unique-id shows" : "sandbox by its apns-unique-id, not \(environment.rawValue)"
        }
        return "\(environment.rawValue), assumed"
    }
}
