import Foundation
import PushCore

/// One line of a token file that needs an answer.
public enum TokenEntry: Sendable {
    /// A device token to send to.
    case token(line: Int, token: DeviceToken)
    /// A line that is not a device token; `message` says why.
    case malformed(line: Int, text: String, message: String)
    /// A line a previous run sent without recording an answer (see ``ResumeState``): it may or
    /// may not have been delivered.
    case uncertain(line: Int, token: DeviceToken, apnsID: UUID, attempts: Int)
    /// A token an earlier run had in flight that the token file no longer holds: its outcome
    /// stays unknown, and it is reported (with the line it had then) rather than forgotten.
    case vanished(line: Int, token: String, apnsID: UUID, attempts: Int)
}

/// The final outcome of one line of a token file: exactly one per line that is not blank or a
/// comment, written as one JSON line.
public struct BulkResult: Sendable, Equatable {
    public var line: Int
    /// The token as lower-case hex; for a malformed line, the line's text.
    public var token: String
    public var status: Int?
    public var reason: APNsReason?
    /// The `apns-id`, as the canonical lower-case UUID text it was sent with.
    public var apnsID: String?
    /// How many times it was sent (0 when it never was).
    public var attempts: Int
    /// True when an earlier attempt's outcome is unknown (its answer was lost with its
    /// connection), so the device may have received the notification more than once.
    public var uncertain = false
    /// Why: what happened to the send whose answer was lost (`connection_closed`, `stream_reset`,
    /// `timeout`), so that a user can tell a flaky network from a server that resets streams.
    public var uncertainBecause: BulkResultCode?
    /// For 410 Unregistered: when the token stopped being valid.
    public var timestamp: Date?
    /// When no answer was final: why (`malformed_token`, `outcome_unknown`,
    /// `connection_closed`...).
    public var error: BulkResultCode?
    public var message: String?

    public init(
        line: Int,
        token: String,
        status: Int? = nil,
        reason: APNsReason? = nil,
        apnsID: String? = nil,
        attempts: Int,
        uncertain: Bool = false,
        timestamp: Date? = nil,
        error: BulkResultCode? = nil,
        message: String? = nil,
        uncertainBecause: BulkResultCode? = nil
    ) {
        self.uncertainBecause = uncertainBecause
        self.line = line
        self.token = token
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.attempts = attempts
        self.uncertain = uncertain
        self.timestamp = timestamp
        self.error = error
        self.message = message
    }

    public var isAccepted: Bool { status == 200 }

    /// One JSON line, keys always in the same order: `line`, `token`, `status`, `reason`,
    /// `apns_id`, `attempts`, then the optional ones.
    public var jsonLine: String {
        var bytes: [UInt8] = []
        appendJSONLine(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``jsonLine``'s bytes, appended: a bulk run writes one per notification straight into the
    /// results file's buffer.
    public func appendJSONLine(to bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + 192)
        append("{\"line\":", to: &bytes)
        TextEncoding.appendDecimal(line, to: &bytes)
        append(",\"token\":", to: &bytes)
        TextEncoding.appendJSONString(token, to: &bytes)
        append(",\"status\":", to: &bytes)
        if let status { TextEncoding.appendDecimal(status, to: &bytes) } else { append("null", to: &bytes) }
        append(",\"reason\":", to: &bytes)
        if let reason { TextEncoding.appendJSONString(reason.rawValue, to: &bytes) } else { append("null", to: &bytes) }
        append(",\"apns_id\":", to: &bytes)
        if let apnsID { TextEncoding.appendJSONString(apnsID, to: &bytes) } else { append("null", to: &bytes) }
        append(",\"attempts\":", to: &bytes)
        TextEncoding.appendDecimal(attempts, to: &bytes)
        if uncertain { append(",\"uncertain\":true", to: &bytes) }
        if let uncertainBecause {
            append(",\"uncertain_because\":", to: &bytes)
            TextEncoding.appendJSONString(uncertainBecause.rawValue, to: &bytes)
        }
        if let timestamp {
            append(",\"timestamp\":", to: &bytes)
            TextEncoding.appendJSONString(Self.dateFormatter.string(from: timestamp), to: &bytes)
        }
        if let reason, status != 200 {
            append(",\"explanation\":", to: &bytes)
            TextEncoding.appendJSONString(reason.explanation, to: &bytes)
            append(",\"fix\":", to: &bytes)
            TextEncoding.appendJSONString(reason.fix, to: &bytes)
        }
        if let error {
            // The error object of every report: {code, message}.
            append(",\"error\":{\"code\":", to: &bytes)
            TextEncoding.appendJSONString(error.rawValue, to: &bytes)
            if let message {
                append(",\"message\":", to: &bytes)
                TextEncoding.appendJSONString(message, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
        append("}\n", to: &bytes)
    }

    private func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    nonisolated(unsafe) private static let dateFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}

/// Why a run ended before every line was done.
public enum BulkStopCause: String, Sendable, Codable {
    case interrupted
    case credentialRejected = "credential_rejected"
    case connectionFailed = "connection_failed"
    case outputFailed = "output_failed"
    /// The tokens could not be read to the end (a read error, or a line with no end: not a
    /// file of device tokens).
    case inputFailed = "input_failed"
    /// A resume read no tokens while the run it continues is unfinished.
    case noTokens = "no_tokens"
    /// The server closed connections in a row, each before answering any of the streams it had
    /// in flight (``BulkEngine/Configuration/closedUnansweredLimit``).
    case closedBeforeAnswering = "closed_before_answering"
}

/// What a bulk run did, for the summary line and `--json`.
public struct BulkSummary: Sendable, Encodable, Equatable {
    /// Final result lines written by this run.
    public var results = 0
    public var accepted = 0
    /// Rejections by reason (`BadDeviceToken`: 3); retryable answers that ran out of
    /// attempts count here too.
    public var rejected: [String: Int] = [:]
    /// Lines that needed more than one send.
    public var retried = 0
    /// Lines with no answer in the end (transport failures, unknown outcomes).
    public var failed = 0
    public var malformed = 0
    /// Lines whose result says `uncertain`.
    public var uncertain = 0
    /// Of those, lines an earlier run had in flight when it stopped, reported as
    /// `outcome_unknown` and not sent again.
    public var outcomeUnknown = 0
    /// Lines read but left without a result (the run stopped): ``unanswered`` of them were sent
    /// and their answer is unknown (the resumed run reports them as `outcome_unknown`); the
    /// others were never sent, or not processed, and a resume sends them.
    public var unfinished = 0
    /// Of ``unfinished``: sent, with no answer when the run stopped.
    public var unanswered = 0
    /// Of ``unfinished``: never sent (or not processed): the resumed run sends them.
    public var neverSent = 0
    /// Result lines that reached the results file (less than ``results`` when writing failed:
    /// the others were answered, and the resumed run reports them as `outcome_unknown`).
    public var resultsWritten = 0
    /// The results file vanished: nothing written to it can be used.
    public var resultsLost = false
    /// Lines whose token an earlier line already had: not sent again, and without a result.
    public var duplicates = 0
    /// Tokens an earlier run had in flight that the token file no longer holds.
    public var missingFromTokens = 0
    /// Requests written, retries included.
    public var requests = 0
    public var connections = 0
    public var seconds: Double = 0
    /// Final results per second.
    public var rate: Double = 0
    public var stoppedBy: BulkStopCause?
    public var stopMessage: String?
    public var stopHint: String?
    /// APNs' reason, when an answer stopped the run.
    public var stopReason: String?
    /// Resumed runs: lines skipped because an earlier run has their result.
    public var skipped = 0
    /// Connections the server closed with GOAWAY, by the reason in its debug data
    /// (`IdleTimeout`: 1); `NO_ERROR` and the like when it gave no reason.
    public var goAways: [String: Int] = [:]
    /// Answers lost in flight, by what happened (`timeout`, `stream_reset`,
    /// `connection_closed`): each made the notification's result uncertain.
    public var lostAnswers: [String: Int] = [:]
    /// Times the streams in flight were halved because answers were lost.
    public var inFlightReductions = 0
    /// The fewest streams in flight per connection the run came down to, when it reduced them.
    public var fewestInFlight: Int?
    /// The deadline of a request, in seconds, when answers came later than the first one and it
    /// grew.
    public var requestTimeoutGrownTo: Double?

    public init() {}

    /// The stop's message and hint travel in the report's `error` object, not here.
    enum CodingKeys: String, CodingKey {
        case results, accepted, rejected, retried, failed, malformed, uncertain, outcomeUnknown, unfinished, requests
        case connections, seconds, rate, stoppedBy, skipped, unanswered, neverSent, resultsWritten, duplicates
        case missingFromTokens, lostAnswers, inFlightReductions, fewestInFlight, requestTimeoutGrownTo
    }

    public var rejectedTotal: Int { rejected.values.reduce(0, +) }
}

/// Counts for a progress display.
public struct BulkProgress: Sendable {
    public var finished = 0
    public var accepted = 0
    public var rejected = 0
    public var failed = 0
    public var inFlight = 0
    public var requests = 0
    public var elapsed: Double = 0
    public var connected = false
    public init() {}
}
