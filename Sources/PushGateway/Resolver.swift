import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore

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
                            isRetryable: true
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

extension SocketAddress {
    /// `127.0.0.1:443` or `[::1]:443`.
    var displayString: String {
        guard let ip = ipAddress, let port else { return description }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
