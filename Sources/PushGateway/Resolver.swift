import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Name resolution done by us (not inside NIO's bootstrap) so that it can be timed and
/// reported as its own phase, and so that every address is known.
enum Resolver {
    /// Resolves `host` to every TCP address, in the order the system prefers. `getaddrinfo`
    /// cannot be cancelled, so on timeout its thread is left to finish and its answer dropped.
    static func resolve(host: String, port: Int, timeout: TimeAmount) async throws -> [SocketAddress] {
        try await resolve(host: host, port: port, timeout: timeout, family: nil, fixed: [])
    }

    /// Resolves `host` as above, or takes its addresses from `fixed` when an entry names this
    /// host and port, and keeps those of `family` when one is asked for. A name without an
    /// address of that family is an error saying which addresses it has.
    static func resolve(
        host: String,
        port: Int,
        timeout: TimeAmount,
        family: AddressFamily?,
        fixed: [FixedAddress]
    ) async throws -> [SocketAddress] {
        let all: [SocketAddress]
        if let entry = fixed.first(where: { $0.host.lowercased() == host.lowercased() && $0.port == port }) {
            all = try entry.addresses.map { try SocketAddress(ipAddress: $0, port: port) }
        } else {
            all = try await lookup(host: host, port: port, timeout: timeout)
        }
        guard let family else { return all }
        let kept = all.filter { AddressFamily(of: $0) == family }
        guard kept.isEmpty else { return kept }
        let others = all.map { $0.ipAddress ?? $0.description }.joined(separator: ", ")
        throw GatewayError(
            .noAddressForFamily,
            ServerTrustEvaluator.isIPAddress(host)
                ? "\(host) is not an \(family.name) address, and only \(family.name) was asked for."
                : "\(host) has no \(family.name) address (it resolves to \(others)), and only \(family.name) was asked for.",
            hint: "Connect over \(family.other.name), or let both families be tried.",
            server: host,
            family: family
        )
    }

    static func lookup(host: String, port: Int, timeout: TimeAmount) async throws -> [SocketAddress] {
        let resumed = NIOLockedValueBox(false)
        return try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<[SocketAddress], any Error>) in
            @Sendable func finish(_ result: Result<[SocketAddress], any Error>) {
                let first = resumed.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(with: result) }
            }
            DispatchQueue.global().async {
                finish(Result { try lookup(host: host, port: port) })
            }
            let seconds = Double(timeout.nanoseconds) / 1e9
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                finish(
                    .failure(
                        GatewayError(
                            .dnsTimeout,
                            "Resolving \(host) took longer than \(GatewayError.format(seconds)) s.",
                            hint: "Check the machine's DNS servers (/etc/resolv.conf).",
                            isRetryable: true,
                            server: host
                        )
                    )
                )
            }
        }
    }

    static func lookup(host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            let detail = String(cString: gai_strerror(status))
            throw GatewayError.dnsFailed(host: host, detail: detail)
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            if let address = info.pointee.ai_addr {
                switch info.pointee.ai_family {
                case AF_INET:
                    let ipv4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
                    addresses.append(SocketAddress(ipv4, host: host))
                case AF_INET6:
                    let ipv6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee }
                    addresses.append(SocketAddress(ipv6, host: host))
                default:
                    break
                }
            }
            next = info.pointee.ai_next
        }
        // getaddrinfo lists an address once per socket type on some systems.
        var seen: Set<String> = []
        addresses = addresses.filter { seen.insert($0.description).inserted }
        guard !addresses.isEmpty else {
            throw GatewayError.dnsFailed(host: host, detail: "no IPv4 or IPv6 address")
        }
        return addresses
    }
}

/// An IP address family, to connect over one only.
public enum AddressFamily: String, Sendable, Codable, CaseIterable {
    case ipv4
    case ipv6

    /// The family of an IP socket address; nil for any other kind.
    public init?(of address: SocketAddress) {
        switch address {
        case .v4: self = .ipv4
        case .v6: self = .ipv6
        default: return nil
        }
    }

    /// `IPv4` or `IPv6`.
    public var name: String { self == .ipv4 ? "IPv4" : "IPv6" }

    var other: AddressFamily { self == .ipv4 ? .ipv6 : .ipv4 }
}

/// Addresses given for a host and port instead of asking DNS, as curl's `--resolve` gives them:
/// `HOST:PORT:ADDRESS[,ADDRESS...]`, an IPv6 address bare or in brackets.
public struct FixedAddress: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var addresses: [String]

    public init(host: String, port: Int, addresses: [String]) {
        self.host = host
        self.port = port
        self.addresses = addresses
    }

    /// Parses `HOST:PORT:ADDRESS[,ADDRESS...]`.
    public static func parse(_ text: String) throws -> FixedAddress {
        func invalid(_ why: String) -> GatewayError {
            GatewayError(
                .invalidEndpoint,
                "\"\(text)\" is not HOST:PORT:ADDRESS[,ADDRESS...]: \(why).",
                hint: "Write for example localhost:8443:[::1],127.0.0.1 or api.push.apple.com:443:17.188.1.1."
            )
        }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw invalid("it needs a host, a port and an address") }
        guard !parts[0].isEmpty else { throw invalid("the host is empty") }
        guard let port = Int(parts[1]), (1...65_535).contains(port) else {
            throw invalid("the port \"\(parts[1])\" is not a number from 1 to 65535")
        }
        var addresses: [String] = []
        for item in parts[2].split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let bare = item.hasPrefix("[") && item.hasSuffix("]") ? String(item.dropFirst().dropLast()) : item
            guard (try? SocketAddress(ipAddress: bare, port: port)) != nil else {
                throw invalid("\"\(item)\" is not an IPv4 or IPv6 address")
            }
            addresses.append(bare)
        }
        guard !addresses.isEmpty else { throw invalid("no address is given") }
        return FixedAddress(host: parts[0], port: port, addresses: addresses)
    }
}

/// Answers the Happy Eyeballs connector of NIO's `ClientBootstrap` (RFC 8305: IPv6 and IPv4
/// attempts interleaved, a new one every 250 ms until one connects) with the addresses
/// ``Resolver`` already found and timed, split by family.
struct ResolvedAddresses: NIOPosix.Resolver, Sendable {
    let loop: any EventLoop
    let addresses: [SocketAddress]

    func initiateAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { AddressFamily(of: $0) == .ipv4 })
    }

    func initiateAAAAQuery(host: String, port: Int) -> EventLoopFuture<[SocketAddress]> {
        loop.makeSucceededFuture(addresses.filter { AddressFamily(of: $0) == .ipv6 })
    }

    func cancelQueries() {}
}

extension SocketAddress {
    /// `127.0.0.1:443` or `[::1]:443`.
    var displayString: String {
        guard let ip = ipAddress, let port else { return description }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
