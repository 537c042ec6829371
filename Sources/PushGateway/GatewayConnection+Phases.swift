import CredentialFormats
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import X509

extension GatewayConnection {
    // MARK: Phases

    /// The host and port TCP connects to: the proxy's when there is one.
    func connectTarget() throws -> (host: String, port: Int) {
        guard let proxy = configuration.proxy else { return (configuration.endpoint.host, configuration.endpoint.port) }
        guard let host = proxy.host, !host.isEmpty else {
            throw GatewayError(
                .proxyFailed,
                "The proxy URL has no host.",
                hint: "Write HTTPS_PROXY as http://host:port."
            )
        }
        return (host, proxy.port ?? (proxy.scheme == "https" ? 443 : 80))
    }

    /// Connects to one of `addresses` (all of `host`'s, or of the one family asked for) the
    /// Happy Eyeballs way (RFC 8305), as NIO's `ClientBootstrap` does for a host name: IPv6 and
    /// IPv4 interleaved, the next attempt started 250 ms after the last or as soon as it fails,
    /// the first to connect kept. A family that refuses or drops its packets then costs a
    /// quarter of a second, not the whole timeout, which bounds the phase as a whole.
    func connectTCP(
        _ addresses: [SocketAddress],
        host: String,
        port: Int
    ) async throws -> (any Channel, SocketAddress) {
        let timeout = configuration.timeouts.connect
        let loop = group.next()
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(Self.amount(timeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .resolver(ResolvedAddresses(loop: loop, addresses: addresses))
        let shown = addresses.count == 1 ? addresses[0].displayString : Endpoint(host: host, port: port).description
        do {
            let channel = try await bootstrap.connect(host: host, port: port).get()
            return (channel, channel.remoteAddress ?? addresses[0])
        } catch let error as NIOConnectionError {
            throw Self.classify(error, shown: shown, timeout: timeout)
        } catch {
            if case ChannelError.connectTimeout = error { throw GatewayError.connectTimeout(shown, seconds: timeout) }
            if let io = error as? IOError, io.errnoCode == ECONNREFUSED { throw GatewayError.connectionRefused(shown) }
            throw GatewayError(
                .connectFailed,
                "Connecting to \(shown) failed: \(UserFacing.describe(error)).",
                hint: "Check the network route to the gateway.",
                isRetryable: true
            )
        }
    }

    /// Every address failed: refused when each one refused, else the first other failure, with
    /// each address's failure named when there were several.
    static func classify(_ error: NIOConnectionError, shown: String, timeout: Double) -> GatewayError {
        let failures = error.connectionErrors
        func refused(_ failure: SingleConnectionFailure) -> Bool {
            (failure.error as? IOError)?.errnoCode == ECONNREFUSED
        }
        if !failures.isEmpty, failures.allSatisfy(refused) {
            return .connectionRefused(failures.map(\.target.displayString).joined(separator: " and "))
        }
        if failures.contains(where: { if case ChannelError.connectTimeout = $0.error { true } else { false } }) {
            return .connectTimeout(shown, seconds: timeout)
        }
        let each = failures.map { failure in
            "\(failure.target.displayString) \(refused(failure) ? "refused" : UserFacing.describe(failure.error))"
        }
        return GatewayError(
            .connectFailed,
            "Connecting to \(shown) failed: \(each.isEmpty ? UserFacing.describe(error) : each.joined(separator: "; ")).",
            hint: "Check the network route to the gateway.",
            isRetryable: true
        )
    }

    @discardableResult
    func update<T>(_ body: (inout State) -> T) -> T { state.withLockedValue(body) }

    package static func amount(_ seconds: Double) -> TimeAmount { .nanoseconds(Int64(seconds * 1e9)) }

    package static func seconds(since start: DispatchTime, until end: DispatchTime = .now()) -> Double {
        Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    static func name(_ version: TLSVersion) -> String {
        switch version {
        case .tlsv1: "TLSv1"
        case .tlsv11: "TLSv1.1"
        case .tlsv12: "TLSv1.2"
        case .tlsv13: "TLSv1.3"
        }
    }

    /// `host:port` of a proxy URL, without user or password.
    static func proxyDisplay(_ url: URL) -> String? {
        guard let host = url.host else { return nil }
        return "\(host):\(url.port ?? (url.scheme == "https" ? 443 : 80))"
    }
}
