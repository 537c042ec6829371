import CredentialFormats
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

extension GatewayConnection {
    /// Starts connecting (DNS, TCP, TLS, HTTP/2) before the credential is known, for a program
    /// whose other start-up work (reading its options, the Secret Service) would otherwise come
    /// first: the next ``withConnection(_:eventLoopGroup:isolation:_:)`` on the shared event loops
    /// whose configuration has the same connection settings takes it over, with its own
    /// credential (docs/performance.md, "The cold probe").
    ///
    /// Only a connection that authenticates per request can be made ahead: `configuration`'s
    /// credential must be `.none`, and the credential that adopts it a token key (a client
    /// certificate is part of the TLS handshake). A connection started ahead that nobody with
    /// its settings takes over within ``unclaimedLifetime`` is closed unused; one that failed is
    /// never anyone's error: the command connects again and reports what happens then. Its clock must
    /// be the one the adopting configuration uses (the system's, unless a test says otherwise).
    public static func connectAhead(_ configuration: GatewayConfiguration) {
        guard case .none = configuration.credential else { return }
        let connection = GatewayConnection(configuration: configuration)
        let connected = Task { _ = try await connection.connect() }
        let replaced = ahead.withLockedValue { slot -> Ahead? in
            defer { slot = Ahead(connection: connection, connected: connected) }
            return slot
        }
        if let replaced { Task { await replaced.connection.close() } }
        // Not taken over in time (the command stopped first, or connected with other settings):
        // closed, not left for the server to time out.
        Task {
            try? await Task.sleep(nanoseconds: UInt64(unclaimedLifetime * 1e9))
            let unclaimed = ahead.withLockedValue { slot -> Bool in
                guard slot?.connection === connection else { return false }
                slot = nil
                return true
            }
            if unclaimed { await connection.close() }
        }
    }

    /// Closes the connection started ahead, unless it was taken over: for a program that learns
    /// before ``unclaimedLifetime`` that it will not connect that way (its credential turned out
    /// to be a client certificate, say).
    public static func dropAhead() {
        guard
            let entry = ahead.withLockedValue({ slot -> Ahead? in
                defer { slot = nil }
                return slot
            })
        else { return }
        Task { await entry.connection.close() }
    }

    /// How long a connection started ahead waits to be taken over.
    public static let unclaimedLifetime: Double = 10

    /// The connection started ahead, connected and given `configuration`'s credential, when
    /// its settings are `configuration`'s; nil otherwise, and then it stays for the connection
    /// it was started for. Taken at most once.
    static func takeAhead(for configuration: GatewayConfiguration) async -> GatewayConnection? {
        let adoptable: Bool
        switch configuration.credential {
        case .token, .remoteToken: adoptable = true
        case .certificate, .none: adoptable = false
        }
        guard adoptable,
            let entry = ahead.withLockedValue({ slot -> Ahead? in
                guard let entry = slot, entry.connection.configuration.connectsAsAhead(configuration) else {
                    return nil
                }
                slot = nil
                return entry
            })
        else { return nil }
        guard (try? await entry.connected.value) != nil, entry.connection.isUsable else {
            await entry.connection.close()
            return nil
        }
        entry.connection.adopt(configuration)
        return entry.connection
    }

    /// Takes `configuration`'s credential, and the provider tokens it signs.
    private func adopt(_ configuration: GatewayConfiguration) {
        let tokens = ProviderTokenCache(
            for: configuration.credential,
            clock: configuration.clock,
            renewAfter: configuration.tokenRenewAfter
        )
        settings.withLockedValue { $0 = (configuration, tokens) }
    }

    private struct Ahead: Sendable {
        let connection: GatewayConnection
        let connected: Task<Void, any Error>
    }

    private static let ahead = NIOLockedValueBox<Ahead?>(nil)
}

extension GatewayConfiguration {
    /// Whether a connection made with these settings is the one `other` would make: the same
    /// endpoint, trust, addresses, proxy, limits and timeouts (the credential and the clock
    /// aside).
    func connectsAsAhead(_ other: GatewayConfiguration) -> Bool {
        endpoint == other.endpoint && caFiles == other.caFiles && trustSystemRoots == other.trustSystemRoots
            && caBundle == other.caBundle && addressFamily == other.addressFamily
            && fixedAddresses == other.fixedAddresses && proxy == other.proxy && proxyOrigin == other.proxyOrigin
            && timeouts == other.timeouts && http2Limits == other.http2Limits && keepAlive == other.keepAlive
            && tokenRenewAfter == other.tokenRenewAfter
    }
}
