import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import PushCredentials
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

    func connectTCP(_ addresses: [SocketAddress]) async throws -> (any Channel, SocketAddress) {
        let timeout = configuration.timeouts.connect
        var lastError: GatewayError?
        // Addresses in the resolver's order; the first that answers wins.
        for address in addresses {
            let bootstrap = ClientBootstrap(group: group)
                .connectTimeout(Self.amount(timeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
            do {
                let channel = try await bootstrap.connect(to: address).get()
                return (channel, address)
            } catch let error as ChannelError where error == .connectTimeout(Self.amount(timeout)) {
                lastError = .connectTimeout(address.displayString, seconds: timeout)
            } catch let error as IOError where error.errnoCode == ECONNREFUSED {
                lastError = lastError ?? .connectionRefused(address.displayString)
            } catch let error as NIOConnectionError {
                lastError = Self.classify(error, address: address, timeout: timeout)
            } catch {
                if case ChannelError.connectTimeout = error {
                    lastError = .connectTimeout(address.displayString, seconds: timeout)
                } else if let io = error as? IOError, io.errnoCode == ECONNREFUSED {
                    lastError = .connectionRefused(address.displayString)
                } else {
                    lastError = GatewayError(
                        .connectFailed,
                        "Connecting to \(address.displayString) failed: \(UserFacing.describe(error)).",
                        hint: "Check the network route to the gateway.",
                        isRetryable: true
                    )
                }
            }
        }
        throw lastError ?? GatewayError(.connectFailed, "No address to connect to.")
    }

    static func classify(_ error: NIOConnectionError, address: SocketAddress, timeout: Double) -> GatewayError {
        for failure in error.connectionErrors.map(\.error) {
            if let io = failure as? IOError, io.errnoCode == ECONNREFUSED {
                return .connectionRefused(address.displayString)
            }
            if case ChannelError.connectTimeout = failure {
                return .connectTimeout(address.displayString, seconds: timeout)
            }
        }
        return GatewayError(
            .connectFailed,
            "Connecting to \(address.displayString) failed: \(UserFacing.describe(error)).",
            isRetryable: true
        )
    }

    @discardableResult
    func update<T>(_ body: (inout State) -> T) -> T { state.withLockedValue(body) }

    static func amount(_ seconds: Double) -> TimeAmount { .nanoseconds(Int64(seconds * 1e9)) }

    static func seconds(since start: DispatchTime, until end: DispatchTime = .now()) -> Double {
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
