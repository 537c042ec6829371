import Foundation

extension BulkEngine {
    public struct Configuration: Sendable {
        public var connections = 1
        /// Sends per notification, the first and every refused one included.
        public var maxAttempts = 5
        /// Back-off before retry n (n ≥ 1) is random in 0...min(cap, base·2ⁿ⁻¹).
        public var backoffBase: Double = 0.2
        public var backoffCap: Double = 30
        /// A `Retry-After` longer than this is cut to it.
        public var retryAfterCap: Double = 600
        /// How long one request first waits for its answer. When requests reach it, the deadline
        /// doubles (at most once per ``BulkEngine/tick(now:)``) and they wait on; a request is
        /// given up only at ``requestTimeoutGrowth`` times this.
        public var requestTimeout: Double = 30
        /// How far the deadline may grow, as a multiple of ``requestTimeout``.
        public var requestTimeoutGrowth: Double = 8
        /// Connections the server may close in a row, each before answering any of the streams
        /// it had in flight, before the run stops (``BulkStopCause/closedBeforeAnswering``).
        public var closedUnansweredLimit = 2
        /// After this side decides to close a connection (or the run stops), how long the
        /// streams in flight may take to be answered.
        public var drainTimeout: Double = 10
        /// Connecting attempts in a row that may fail before the run gives up.
        public var reconnectLimit = 6
        /// Streams in flight per connection never exceed this, whatever the server allows.
        public var maxInFlightPerConnection = 1_000
        /// Streams a server may reset without answering, per connection and second, before this
        /// side closes the connection. Resets after an answer never count.
        public var unansweredResetsPerSecond = 1_000
        /// Lines an earlier run sent without recording the answer: send them again with the same
        /// `apns-id` (true) or report them as `outcome_unknown` (false: at most once).
        public var resendUncertain = false
        /// A notification whose answer was lost in this run (a timeout, a reset, a connection lost
        /// in flight): sent again with the same `apns-id`, its result `uncertain` (true), or
        /// given up at once with its result `uncertain` and why (false: at most once).
        /// ``BulkSendJob`` sets both from the run's policy (``BulkRunHeader/resendUncertain``).
        public var resendLostAnswers = true
        /// The push type sent, for the words of a result not sent again.
        public var pushType = PushType.alert
        /// Token lines held ready ahead of the connections.
        public var readAhead = 4_096
        /// The provider token comes from a source that can be asked for another (a key held
        /// elsewhere, a token a fleet shares): the first `InvalidProviderToken` answer asks the
        /// driver for a new token (``Action/refreshProviderToken``) and sends the line again;
        /// only a refusal of the new token stops the run. False: the first refusal stops it.
        public var refreshesProviderToken = false
        public init() {}
    }
}
