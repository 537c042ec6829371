extension LocalGateway {
    /// What the gateway has seen since it started.
    public struct Statistics: Codable, Sendable, Equatable {
        /// TCP connections accepted.
        public var connections = 0
        /// Streams opened by clients.
        public var streams = 0
        public var accepted = 0
        /// Rejections by reason (`BadDeviceToken`: 3).
        public var rejected: [String: Int] = [:]
        /// Streams refused with RST_STREAM REFUSED_STREAM because they exceeded the advertised
        /// SETTINGS_MAX_CONCURRENT_STREAMS.
        public var refusedStreams = 0
        /// Connections closed after the idle timeout (GOAWAY `IdleTimeout`).
        public var idleConnectionsClosed = 0
        /// Connections closed because their TLS handshake did not finish in time.
        public var handshakeTimeouts = 0
        /// Connections closed because they sent no request within
        /// ``Configuration/firstRequestTimeout`` of their handshake.
        public var firstRequestTimeouts = 0
        /// Connections closed to make room at ``Configuration/maxConnections``: each the one
        /// idle the longest when a new connection arrived.
        public var connectionsShed = 0
        /// Connections closed as soon as they were accepted: the gateway was at its cap and
        /// every connection had a request in flight.
        public var connectionsRefused = 0
        /// The most connections open at once.
        public var maxOpenConnections = 0
        /// Connections that broke the limit after acknowledging it (swift-nio-http2 closes those
        /// with a PROTOCOL_ERROR GOAWAY; RFC 9113 section 5.1.2 allows either answer).
        public var streamLimitViolations = 0
        /// The most streams open at once on one connection.
        public var maxConcurrentStreamsObserved = 0
        /// The most streams open at once while each SETTINGS_MAX_CONCURRENT_STREAMS value was in
        /// force (acknowledged by the client), keyed by that value: `{"1": 1, "1000": 37}`.
        /// Streams that arrive above a lowered limit the client has not yet acknowledged count
        /// under the limit still in force (and are refused, see ``refusedStreams``).
        public var maxConcurrentStreamsByLimit: [String: Int] = [:]
        public var goAwaysSent = 0
        /// Connections closed by ``Configuration/Faults/closeAfterStreams``.
        public var connectionsClosedByFault = 0
        /// SETTINGS frames sent after the first, changing MAX_CONCURRENT_STREAMS.
        public var settingsChanges = 0
        /// Streams that arrived above the last-stream-id of a GOAWAY already sent: refused
        /// unprocessed.
        public var refusedAfterGoAway = 0
        /// apns-ids of notifications recorded as accepted whose answer was never sent, because
        /// ``Configuration/Faults/dropAfterAccepted`` cut the connection first.
        public var answersDropped: [String] = []
        /// Connections closed because the gateway gave up on them: after a GOAWAY for a
        /// connection error or a flood, or because their answers stopped draining.
        public var connectionsDropped = 0

        public var rejectedTotal: Int { rejected.values.reduce(0, +) }
    }
}
