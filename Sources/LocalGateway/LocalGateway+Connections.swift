import NIOCore
import NIOHTTP2
import NIOSSL
import PushTransport

extension LocalGateway {
    /// A connection just accepted: admitted within the cap (taking the place of the connection
    /// idle the longest when at it), then TLS, its deadline, and HTTP/2 once the handshake is done.
    func configureConnection(_ channel: any Channel) throws {
        guard let number = admit(channel) else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            let open = state.withLockedValue { state in
                state.connections.remove(number)
                return state.connections.count
            }
            memory.connectionClosed(leaving: open)
        }
        if let idle = configuration.idleTimeout, idle > 0 {
            // Counts bytes read, so that any traffic (requests, PINGs, SETTINGS acks) keeps it alive.
            try channel.pipeline.syncOperations.addHandler(
                IdleStateHandler(readTimeout: .nanoseconds(Int64(idle * 1e9)))
            )
        }
        let ssl = NIOSSLServerHandler(context: sslContext)
        try channel.pipeline.syncOperations.addHandler(ssl)
        try channel.pipeline.syncOperations.addHandler(
            HandshakeDeadline(seconds: configuration.handshakeTimeout) { [weak self] in
                self?.updateStatistics { $0.handshakeTimeouts += 1 }
            }
        )
        // Answers written during one batch of reads leave as one TLS record, not one each.
        try channel.pipeline.syncOperations.addHandler(BatchingHandler())
        let gateway = self
        try channel.pipeline.syncOperations.addHandler(
            HTTP2Starter { channel in try gateway.startHTTP2(channel, number: number) }
        )
    }

    /// Numbers the connection and gives it a place in the table: nil when it is to be closed at
    /// once (the gateway is stopping, or at its cap with no connection idle). At the cap, the
    /// connection idle the longest is shed: GOAWAY `IdleTimeout` and closed.
    private func admit(_ channel: any Channel) -> Int? {
        let (number, admission) = state.withLockedValue { state -> (Int, ConnectionTable.Admission?) in
            state.statistics.connections += 1
            let number = state.statistics.connections
            guard !state.stopping else { return (number, nil) }
            let admission = state.connections.admit(number, channel)
            switch admission {
            case .admitted: break
            case .shed: state.statistics.connectionsShed += 1
            case .refused: state.statistics.connectionsRefused += 1
            }
            state.statistics.maxOpenConnections = max(state.statistics.maxOpenConnections, state.connections.count)
            return (number, admission)
        }
        switch admission {
        case nil, .refused?:
            return nil
        case .shed(let oldest)?:
            oldest.pipeline.fireUserInboundEventTriggered(GatewayShedEvent())
            // In case the event finds nobody to act on it (the connection is closing already).
            oldest.eventLoop.scheduleTask(in: ConnectionBounds.goAwayFlushDeadline) { oldest.close(promise: nil) }
            return number
        case .admitted?:
            return number
        }
    }

    /// The connection awaits an answer (added latency): it is not shed meanwhile.
    func connectionBecameBusy(_ number: Int) {
        state.withLockedValue { $0.connections.becameBusy(number) }
    }

    /// Nothing on the connection awaits an answer: it may be shed, after those idle longer.
    func connectionBecameIdle(_ number: Int) {
        state.withLockedValue { $0.connections.becameIdle(number) }
    }

    /// HTTP/2 on a connection whose TLS handshake is done: the first SETTINGS advertise one
    /// stream when the client brought no certificate and must show a provider token first.
    func startHTTP2(_ channel: any Channel, number: Int) throws {
        let identity = ClientIdentity(
            certificate: HTTP2Starter.peerCertificate(of: channel),
            demandsToken: configuration.dynamics.singleStreamUntilToken && !configuration.tokenKeys.isEmpty
        )
        let connection = GatewayConnectionState(identity: identity, rules: .init(configuration))
        var settings = NIOHTTP2Handler.ConnectionConfiguration()
        settings.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: connection.initialLimit)]
        var streamSettings = NIOHTTP2Handler.StreamConfiguration()
        ConnectionBounds.apply(&settings, &streamSettings)
        let guardian = ConnectionGuard { [weak self] in self?.updateStatistics { $0.connectionsDropped += 1 } }
        // Streams are served at the frame level (GatewayStreams), not by a child channel each.
        let http2 = NIOHTTP2Handler(
            mode: .server,
            frameDelegate: guardian,
            connectionConfiguration: settings,
            streamConfiguration: streamSettings
        )
        try channel.pipeline.syncOperations.addHandler(guardian)
        try channel.pipeline.syncOperations.addHandler(http2)
        let streams = GatewayStreams(gateway: self, number: number, state: connection)
        try channel.pipeline.syncOperations.addHandler(streams)
        try channel.pipeline.syncOperations.addHandler(GatewayConnectionObserver(gateway: self, streams: streams))
    }
}
