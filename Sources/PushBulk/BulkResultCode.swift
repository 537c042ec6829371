/// Why a line of a bulk run has no final answer (a result's `error.code`), or why an earlier
/// send of it may have been delivered (its `uncertain_because`): a closed set, whose raw values
/// are the strings results files and JSON reports have always carried.
public enum BulkResultCode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The line is not a device token.
    case malformedToken = "malformed_token"
    /// An earlier run sent it and stopped before its answer: it may or may not have been
    /// delivered. As an error, it was not sent again; as `uncertain_because`, it was, with the
    /// same `apns-id` and collapse ID.
    case outcomeUnknown = "outcome_unknown"
    /// No answer came within the request timeout.
    case timeout
    /// The server did not process it (a refused stream, a GOAWAY above it) in every send allowed.
    case notProcessed = "not_processed"
    /// GOAWAY said the server processed it, but its answer never came.
    case unansweredAfterGoAway = "unanswered_after_goaway"
    /// The server reset its stream before answering.
    case streamReset = "stream_reset"
    /// The connection closed before its answer.
    case connectionClosed = "connection_closed"

    public var description: String { rawValue }
}
