import Foundation
import PushCore

extension BulkEngine {
    // MARK: Streams

    /// The request's headers were written on stream `streamID`.
    public mutating func streamOpened(_ sendID: SendID, streamID: Int) {
        guard let id = sendConnection[sendID] else { return }
        connections[id]?.inFlight[sendID]?.streamID = streamID
    }

    public mutating func answered(_ sendID: SendID, _ response: PushResponse, now: Double) -> [Action] {
        guard let connection = sendConnection[sendID], let flight = take(sendID) else { return [] }
        var actions: [Action] = []
        var item = flight.item
        answerReturned(on: connection)
        if response.isAccepted {
            finalAnswer(item, response, into: &actions)
        } else if response.isRetryable {
            // APNs did not take it: safe to send again.
            clearJournal(&item, into: &actions)
            if stopping {
                leaveUnfinished(item)
            } else if item.attempts < configuration.maxAttempts {
                retries.append((due: now + retryDelay(item, response), item: item))
            } else {
                finalAnswer(item, response, into: &actions)
            }
        } else if response.reason == .invalidProviderToken, sendAgainWithNewToken(flight, now: now, into: &actions) {
            // Not delivered (403): sent again once another token is had.
        } else if let reason = response.reason, Self.affectsEveryNotification(reason) {
            // Every other line would get the same answer. This one is not final: the cause is
            // the credential, topic or payload, and a resumed run sends it once that is fixed.
            clearJournal(&item, into: &actions)
            leaveUnfinished(item)
            if !stopping {
                summary.stopReason = reason.rawValue
                stop(
                    .credentialRejected,
                    message: "APNs answered \(response.status) \(reason.rawValue): \(reason.explanation)",
                    hint: reason.fix,
                    now: now,
                    into: &actions
                )
            }
        } else {
            finalAnswer(item, response, into: &actions)
        }
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// The server reset the stream. After an answer this is a normal completion (the send is
    /// already done and nothing is counted).
    public mutating func reset(_ sendID: SendID, code: ResetCode, now: Double) -> [Action] {
        guard let id = sendConnection[sendID], let flight = connections[id]?.inFlight[sendID] else { return [] }
        var actions: [Action] = []
        finishStream(sendID, on: id)
        if code == .refusedStream {
            notProcessed(flight.item, now: now, into: &actions)
        } else if let last = connections[id]?.lastStreamID, (flight.streamID ?? Int.max) > last {
            notProcessed(flight.item, now: now, into: &actions)
        } else {
            let name: String
            switch code {
            case .noError: name = "NO_ERROR"
            case .refusedStream: name = "REFUSED_STREAM"
            case .other(let other): name = other
            }
            lost(
                flight.item,
                sendID: sendID,
                serverLimit: connections[id]?.limit,
                code: .streamReset,
                message: "The server reset the stream (\(name)) without answering.",
                now: now,
                into: &actions
            )
            countUnansweredReset(id, now: now, into: &actions)
        }
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// The stream ended with neither an answer nor a reset: the connection is closing or going
    /// away. Decided when the GOAWAY or the connection's end is known.
    public mutating func streamClosed(_ sendID: SendID, now: Double) -> [Action] {
        guard let id = sendConnection[sendID], let flight = connections[id]?.inFlight[sendID] else { return [] }
        var actions: [Action] = []
        if flight.streamID == nil {
            finishStream(sendID, on: id)
            notProcessed(flight.item, now: now, into: &actions)
        } else if let last = connections[id]?.lastStreamID, let stream = flight.streamID {
            finishStream(sendID, on: id)
            if stream > last {
                notProcessed(flight.item, now: now, into: &actions)
            } else {
                unansweredAfterGoAway(flight.item, into: &actions)
            }
        } else {
            connections[id]?.inFlight[sendID]?.closedUnanswered = true
        }
        checkFinished(now: now, into: &actions)
        return actions
    }
}

/// The notifications' `apns-id`s: random version 4 UUIDs (RFC 9562) drawn from a value, so that
/// a copy of the engine draws its own sequence instead of sharing a generator with the
/// original. An `apns-id` must be unique within a run, not secret: SplitMix64 repeats no output
/// within its period of 2^64 draws.
struct UUIDSource {
    var random: SplitMix64
    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    mutating func next() -> String {
        var high = random.next()
        var low = random.next()
        high = (high & ~0xF000) | 0x4000  // version 4 in the 13th hex digit
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // variant 10x
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: &bytes) { TextEncoding.lowercaseUUID($0) }
    }
}
