import Foundation
import PushStore

extension ProbeService {
    /// A `/probe` query's parameters, read but not yet checked against the store.
    struct Request {
        var alias: String
        var environment: PushEnvironment
        var topic: String?
    }

    /// Reads `credential`, `environment` and `topic` from a query.
    static func parse(_ query: [(String, String)]) throws -> Request {
        let known = ["credential", "environment", "topic"]
        if let unknown = query.first(where: { !known.contains($0.0) }) {
            throw MonitoringError(
                .invalidProbeRequest,
                "Unknown parameter \"\(Untrusted.display(unknown.0))\": /probe takes credential=ALIAS, environment=sandbox|production and optionally topic=BUNDLE."
            )
        }
        let value = { (name: String) in query.last(where: { $0.0 == name })?.1 }
        guard let alias = value("credential"), !alias.isEmpty else {
            throw MonitoringError(
                .invalidProbeRequest,
                "Missing credential=ALIAS: name a credential of the store."
            )
        }
        guard let environmentText = value("environment") else {
            throw MonitoringError(
                .invalidProbeRequest,
                "Missing environment=sandbox|production: say which gateway to probe."
            )
        }
        guard let environment = PushEnvironment(rawValue: environmentText) else {
            throw MonitoringError(
                .invalidProbeRequest,
                "environment=\(Untrusted.display(environmentText)) is not an environment: use sandbox or production."
            )
        }
        let topic = value("topic").flatMap { $0.isEmpty ? nil : $0 }
        return Request(alias: alias, environment: environment, topic: topic)
    }

    /// Checks a request against the store's index. Only stored aliases are taken (a file path
    /// would let anyone who can scrape read files as the exporter's user), and only the
    /// credential's own topics (``allowedTopics(of:)``).
    static func target(_ request: Request, stored: [StoredCredential], storePath: String) throws -> ProbeTarget {
        guard let credential = stored.first(where: { $0.alias == request.alias }) else {
            throw MonitoringError(
                .invalidProbeRequest,
                "No credential \"\(Untrusted.display(request.alias))\" in the store at \(storePath): name one of its aliases."
            )
        }
        if let topic = request.topic {
            let allowed = allowedTopics(of: credential)
            guard allowed.contains(topic) else {
                let named =
                    allowed.isEmpty
                    ? "it records no topics, so name none and probe its default"
                    : "name one of \(allowed.joined(separator: ", "))"
                throw MonitoringError(
                    .invalidProbeRequest,
                    "topic=\(Untrusted.display(topic)) is not one of \(Untrusted.display(request.alias))'s topics: \(named)."
                )
            }
        }
        return ProbeTarget(credential: request.alias, environment: request.environment, topic: request.topic)
    }
}
