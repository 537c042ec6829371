import CredentialFormats
import Foundation
import PushCore

/// The HTTP CONNECT proxy a connection goes through, and where that setting came from.
public struct ProxySettings: Sendable, Equatable {
    /// Where the proxy setting came from, so that an error about the proxy can name it.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        /// Given explicitly by the caller (a command-line option, a configuration value).
        case explicit
        /// Read from this environment variable (`HTTPS_PROXY` or `https_proxy`).
        case environment(variable: String)

        public var description: String {
            switch self {
            case .explicit: return "the proxy setting given"
            case .environment(let variable): return variable
            }
        }
    }

    public var url: URL
    public var source: Source

    /// The environment variables ``resolve(explicit:for:environment:)`` reads.
    public static let variables = ["HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"]

    public init(url: URL, source: Source) {
        self.url = url
        self.source = source
    }

    /// The proxy for a connection to `host`: `explicit` when given; else `HTTPS_PROXY` (or
    /// `https_proxy`) from `environment`, except for loopback hosts and the hosts `NO_PROXY`
    /// (or `no_proxy`) names (`*`, a host, or a domain with or without a leading dot). Nil
    /// when there is none.
    public static func resolve(
        explicit: String?,
        for host: String,
        environment: [String: String] = ProcessEnvironment.subset(variables)
    ) throws -> ProxySettings? {
        if let explicit {
            guard let url = URL(string: explicit), url.host != nil else {
                throw GatewayError(
                    .invalidProxy,
                    "The proxy \"\(explicit)\" is not a proxy URL.",
                    hint: "Give one such as http://proxy.example.com:3128."
                )
            }
            try checkScheme(url, text: explicit, origin: Source.explicit.description)
            return ProxySettings(url: url, source: .explicit)
        }
        // HTTPS_PROXY wins over https_proxy even when empty: set but empty means no proxy.
        let variable = environment["HTTPS_PROXY"] != nil ? "HTTPS_PROXY" : "https_proxy"
        guard let text = environment[variable], !text.isEmpty else { return nil }
        if bypasses(host: host, environment: environment) { return nil }
        guard let url = URL(string: text.contains("://") ? text : "http://" + text), url.host != nil else {
            throw GatewayError(
                .invalidProxy,
                "\(variable) is set to \"\(text)\", which is not a proxy URL.",
                hint: "Set it to e.g. http://proxy.example.com:3128, or unset it."
            )
        }
        try checkScheme(url, text: text, origin: variable)
        return ProxySettings(url: url, source: .environment(variable: variable))
    }

    /// Only HTTP CONNECT proxies are spoken: a SOCKS or TLS proxy used as one would fail in
    /// confusing ways, or silently send the CONNECT request where it does not belong.
    static func checkScheme(_ url: URL, text: String, origin: String) throws {
        let scheme = url.scheme?.lowercased() ?? "http"
        guard scheme == "http" else {
            throw GatewayError(
                .unsupportedProxy,
                "The proxy \"\(text)\" (from \(origin)) is a \(scheme) proxy; only HTTP CONNECT proxies (http://host:port) are supported.",
                hint: "Use an HTTP proxy, or connect without one."
            )
        }
    }

    /// True for loopback hosts and for hosts that `NO_PROXY` (or `no_proxy`) names.
    public static func bypasses(host: String, environment: [String: String]) -> Bool {
        let lowered = host.lowercased()
        if ["localhost", "::1", "[::1]"].contains(lowered) || lowered.hasPrefix("127.") { return true }
        let exclusions = (environment["NO_PROXY"] ?? environment["no_proxy"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        for entry in exclusions {
            if entry == "*" { return true }
            let suffix = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if lowered == suffix || lowered.hasSuffix("." + suffix) { return true }
        }
        return false
    }
}
