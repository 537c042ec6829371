import NIOHTTP2

/// The rules a connection's state machine is given, and what its events return.
extension GatewayConnectionState {
    /// The configuration's rules that a connection's events depend on.
    struct Rules {
        /// SETTINGS_MAX_CONCURRENT_STREAMS at the start (when no token is awaited).
        var maxConcurrentStreams = 1000
        var singleStreamAfterRejection = true
        var closeAfterStreams: Int?
        var goAwayAfterStreams: Int?
        var goAwayReason = "Shutdown"
        var changeMaxConcurrentStreams: (afterAccepted: Int, to: Int)?

        init() {}

        init(_ configuration: LocalGateway.Configuration) {
            let faults = configuration.faults
            maxConcurrentStreams = faults.maxConcurrentStreams
            singleStreamAfterRejection = configuration.dynamics.singleStreamAfterRejection
            closeAfterStreams = faults.closeAfterStreams
            goAwayAfterStreams = faults.goAwayAfterStreams
            goAwayReason = faults.goAwayReason
            changeMaxConcurrentStreams = faults.changeMaxConcurrentStreams
        }
    }

    /// A GOAWAY NO_ERROR to write now.
    struct GoAway: Equatable {
        var lastStreamID: HTTP2StreamID
        var reason: String
        /// Streams above the last one whose request is still arriving: each is refused with its
        /// own RST_STREAM REFUSED_STREAM before the GOAWAY, since once it is out swift-nio-http2
        /// drops such streams silently and the client would learn of them only from the GOAWAY.
        var refused: [HTTP2StreamID]
        /// Every processed stream has its answer: close (after the lingering moment).
        var thenClose: Bool
    }

    enum OnGoAway: Equatable {
        case none
        /// Decided within a batch of reads: the frame goes out when the batch ends.
        case deferred
        case send(GoAway)
    }

    /// ENHANCE_YOUR_CALM naming `lastStreamID`, then a close after
    /// ``ConnectionBounds/goAwayFlushDeadline`` in case the frame cannot be written.
    enum OnCalm: Equatable {
        case none
        case sendGoAway(lastStreamID: HTTP2StreamID)
    }

    enum OnStreamOpened: Equatable {
        /// Read its request.
        case read
        /// Above the advertised limit (possible while a lowered limit is not yet acknowledged):
        /// refused without processing, so the client may retry it; and the client given up on
        /// when it was refused too many (`calm`).
        case refuse(calm: OnCalm)
        /// The close fault: the connection is cut abruptly, mid-request (no answer, no GOAWAY).
        case closeConnection
    }

    enum OnRequest: Equatable {
        /// Decide and answer it, as the client's identity allows.
        case process
        /// Above the last stream our GOAWAY named: not processed, as RFC 9113 section 6.8
        /// promises; refused, and the client sends it again on a new connection.
        case refuse
        /// Nothing more is processed on this connection.
        case ignore
    }

    /// What to do around an answer being written.
    struct OnAnswered: Equatable {
        /// SETTINGS_MAX_CONCURRENT_STREAMS to send before the answer, so that a client that has
        /// the answer also has the new limit.
        var settings: Int?
        /// After the answer: the goaway fault's GOAWAY.
        var goAway: OnGoAway
        /// After the answer: the last one awaited after GOAWAY, the close is due.
        var close: Bool
    }
}
