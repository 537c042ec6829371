import CredentialFormats
import Foundation

/// Where a gateway listens: a host and a port.
///
/// APNSwift-style static members name Apple's endpoints: ``production``, ``sandbox`` and
/// ``custom(host:port:)`` for anything else (a local gateway, a test server).
public struct Endpoint: Hashable, Sendable, Codable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `api.push.apple.com:443`.
    public static let production = Endpoint(host: "api.push.apple.com", port: 443)
    /// `api.sandbox.push.apple.com:443` (the development environment).
    public static let sandbox = Endpoint(host: "api.sandbox.push.apple.com", port: 443)
    /// Any other gateway.
    public static func custom(host: String, port: Int) -> Endpoint { Endpoint(host: host, port: port) }

    /// Apple's endpoint for an environment.
    public static func apple(_ environment: PushEnvironment) -> Endpoint {
        environment == .production ? .production : .sandbox
    }

    /// The environment of an Apple host; nil for any other host.
    public var environment: PushEnvironment? { Self.appleHosts[host.lowercased()] }

    /// True for Apple's push hosts.
    public var isApple: Bool { environment != nil }

    /// `host:port`, with an IPv6 literal in brackets.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The HTTP/2 provider API hosts, with `api.development.push.apple.com`, which some libraries
    /// use and which is the same service as the sandbox.
    static let appleHosts: [String: PushEnvironment] = [
        "api.push.apple.com": .production,
        "api.sandbox.push.apple.com": .sandbox,
        "api.development.push.apple.com": .sandbox,
    ]

    /// The legacy binary interface and feedback service, shut down on 31 March 2021.
    static let legacyHosts: [String: PushEnvironment] = [
        "gateway.push.apple.com": .production,
        "gateway.sandbox.push.apple.com": .sandbox,
        "feedback.push.apple.com": .production,
        "feedback.sandbox.push.apple.com": .sandbox,
    ]
    static let legacyPorts: Set<Int> = [2195, 2196]

    /// The endpoint to use, and notices to show the user about how it was chosen.
    public struct Resolution: Sendable, Equatable {
        public var endpoint: Endpoint
        /// One line each, for stderr: a legacy host or port mapped to the HTTP/2 API.
        public var notices: [String]
    }

    /// Decides the endpoint from the command-line options.
    ///
    /// - `gateway` (`HOST`, `HOST:PORT`, `[IPv6]:PORT`, optionally with `https://`) wins over
    ///   `environment`; with an Apple host its environment must agree with `environment` when
    ///   both are given.
    /// - `port` replaces the port (443 or 2197 for Apple).
    /// - The legacy binary-interface hosts (`gateway[.sandbox].push.apple.com`, the feedback
    ///   service) and ports 2195/2196 on Apple hosts are mapped to the HTTP/2 endpoint of the
    ///   same environment, with a notice: that interface was shut down on 31 March 2021.
    public static func resolve(
        environment: PushEnvironment?,
        port: Int? = nil,
        gateway: String? = nil
    ) throws -> Resolution {
        var notices: [String] = []
        var endpoint: Endpoint
        if let gateway {
            let (host, parsedPort) = try parse(gateway)
            if let legacy = legacyHosts[host.lowercased()] {
                endpoint = apple(legacy)
                notices.append(
                    "\(host) is the legacy binary interface, shut down on 31 March 2021; using \(endpoint.host) (HTTP/2) instead."
                )
                if let parsedPort, !legacyPorts.contains(parsedPort) { endpoint.port = parsedPort }
            } else {
                endpoint = Endpoint(host: host, port: parsedPort ?? 443)
            }
            if let environment, let own = endpoint.environment, own != environment {
                throw GatewayError(
                    .invalidEndpoint,
                    "\(gateway) is Apple's \(own) gateway, but the \(environment) environment was asked for.",
                    hint: "Give one of them: the environment picks Apple's host by itself."
                )
            }
        } else {
            endpoint = apple(environment ?? .sandbox)
        }
        if let port {
            guard (1...65_535).contains(port) else {
                throw GatewayError(
                    .invalidEndpoint,
                    "Port \(port) is not between 1 and 65535.",
                    hint: "APNs listens on 443 and 2197."
                )
            }
            endpoint.port = port
        }
        if endpoint.isApple, legacyPorts.contains(endpoint.port) {
            notices.append(
                "Port \(endpoint.port) belonged to the legacy binary interface, shut down on 31 March 2021; using port 443 (HTTP/2) instead."
            )
            endpoint.port = 443
        }
        return Resolution(endpoint: endpoint, notices: notices)
    }

    /// Splits `HOST`, `HOST:PORT`, `[IPv6]`, `[IPv6]:PORT` or a bare IPv6 literal; tolerates an
    /// `https://` prefix and a trailing `/` (people paste URLs).
    /// `text` without the spaces and tabs around it: what `trimmingCharacters(in: .whitespaces)`
    /// removes (Unicode's space separators, the tab, and the zero-width space, a separator in
    /// older Unicode that Foundation's set keeps), without Foundation's bridging to `NSString`,
    /// which a cold `send` paid for on its first use (docs/performance.md).
    static func trimmingSpaces(_ text: String) -> Substring {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = text.unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, isSpace(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isSpace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        return Substring(scalars[start..<end])
    }

    public static func parse(_ text: String) throws -> (host: String, port: Int?) {
        var rest = Self.trimmingSpaces(text)
        for scheme in ["https://", "http://"] where rest.lowercased().hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        func invalid(_ why: String) -> GatewayError {
            GatewayError(
                .invalidEndpoint,
                "\"\(text)\" is not a gateway address: \(why).",
                hint: "Write HOST, HOST:PORT or [IPv6]:PORT, for example api.push.apple.com:2197 or [::1]:8443."
            )
        }
        func port(_ digits: Substring) throws -> Int {
            guard let value = Int(digits), (1...65_535).contains(value) else {
                throw invalid("the port \"\(digits)\" is not a number from 1 to 65535")
            }
            return value
        }
        var host: Substring
        var parsedPort: Int?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("the IPv6 address has no closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after ]") }
                parsedPort = try port(after.dropFirst())
            }
        } else if rest.filter({ $0 == ":" }).count > 1 {
            host = rest  // a bare IPv6 literal: it cannot carry a port without brackets
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            parsedPort = try port(rest[rest.index(after: colon)...])
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw invalid("the host is empty") }
        guard !host.contains(where: { $0.isWhitespace || $0 == "@" }) else {
            throw invalid("the host contains a space or @")
        }
        return (String(host), parsedPort)
    }
}
