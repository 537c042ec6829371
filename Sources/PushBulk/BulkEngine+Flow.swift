import Foundation
import PushCore

extension BulkEngine {
    // MARK: Sending

    /// Fills every connection that takes new streams up to its limit. Returns the results of
    /// lines that need no send (malformed, earlier outcome unknown) and, last, the batch to
    /// journal; the batch is sent only after ``journalWritten(ok:now:)``.
    public mutating func fill(now: Double) -> [Action] {
        var actions: [Action] = []
        guard !stopping, pendingBatch.isEmpty, providerToken != .refreshing else { return actions }
        for slot in slots {
            // Read, not bound: a copy of the connection held across the loop would make every
            // insertion below copy its streams in flight.
            guard let id = slot.connection, connections[id]?.takesNewStreams == true else { continue }
            let limit = inFlightLimit(serverLimit: connections[id]?.limit)
            // Counted here rather than read back from the connection at every turn: nothing
            // below but this loop's own insertions changes its streams in flight.
            var inFlight = connections[id]?.inFlight.count ?? limit
            while inFlight < limit, !stopping, var item = nextItem(now: now, into: &actions) {
                inFlight += 1
                item.attempts += 1
                let send = Send(
                    id: nextSendID,
                    connection: id,
                    line: item.line,
                    token: item.token,
                    apnsID: item.apnsID,
                    attempt: item.attempts
                )
                nextSendID += 1
                connections[id]?.inFlight[send.id] = InFlight(item: item, sentAt: now, tokenGeneration: tokenGeneration)
                sendConnection[send.id] = id
                pendingBatch.append(send)
            }
        }
        if !pendingBatch.isEmpty { actions.append(.journal(pendingBatch)) }
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// The journal of the last batch reached the kernel (`ok`), or could not be written: then
    /// nothing of the batch is sent and the run stops.
    public mutating func journalWritten(
        ok: Bool,
        now: Double,
        failure: String? = nil,
        remedy: String = AppendFile.remedy(for: nil)
    ) -> [Action] {
        let batch = pendingBatch
        pendingBatch = []
        var actions: [Action] = []
        if ok {
            summary.requests += batch.count
            progress.requests = summary.requests
            for send in batch {
                connections[send.connection]?.inFlight[send.id]?.item.inJournal = true
                actions.append(.open(send))
            }
            return actions
        }
        for send in batch {
            guard var item = connections[send.connection]?.inFlight[send.id]?.item else { continue }
            finishStream(send.id, on: send.connection)
            item.attempts -= 1
            leaveUnfinished(item)
        }
        stop(
            .outputFailed,
            message: "The journal cannot be written\(failure.map { " (\($0))" } ?? ""); nothing more is sent.",
            hint: remedy,
            now: now,
            into: &actions
        )
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// Once a second or so: retries that are due, requests past their timeout, connections past
    /// their drain deadline.
    public mutating func tick(now: Double) -> [Action] {
        var actions: [Action] = []
        var grown = false
        if !retries.isEmpty {
            var waiting: [(due: Double, item: Item)] = []
            for retry in retries {
                if retry.due <= now { ready.append(retry.item) } else { waiting.append(retry) }
            }
            retries = waiting
        }
        for id in connections.keys.sorted() {
            guard let connection = connections[id] else { continue }
            switch connection.state {
            case .draining(let deadline) where deadline <= now:
                close(id, into: &actions)
                continue
            case .goingAway where connection.inFlight.isEmpty:
                // Everything it owed is answered; the server would close it soon anyway.
                close(id, into: &actions)
                continue
            case .closing, .closed:
                continue  // what it had in flight is decided when it is gone
            default:
                break
            }
            let expired = connection.inFlight.filter {
                !$0.value.closedUnanswered && now - $0.value.sentAt >= backoff.deadline
            }
            // Late answers are waited for longer (once a tick), not copied, up to the cap.
            if let newest = expired.keys.max(), !grown, waitLonger(newest, serverLimit: connection.limit) {
                grown = true
                continue
            }
            if grown, !expired.isEmpty { continue }
            for (sendID, flight) in expired.sorted(by: { $0.key < $1.key }) {
                finishStream(sendID, on: id)
                actions.append(.cancel(sendID, connection.id))
                lost(
                    flight.item,
                    sendID: sendID,
                    serverLimit: connection.limit,
                    code: .timeout,
                    message: "No answer within \(Self.format(now - flight.sentAt)) s.",
                    now: now,
                    into: &actions
                )
            }
        }
        if case .stopping(let deadline?) = phase, deadline <= now {
            phase = .stopping(drainDeadline: nil)
            closeAll(into: &actions)
        }
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// Stops taking token lines, lets what is in flight finish (at most
    /// ``Configuration/drainTimeout``), and ends the run. A second call stops waiting.
    public mutating func stop(_ cause: BulkStopCause, message: String?, hint: String?, now: Double) -> [Action] {
        var actions: [Action] = []
        stop(cause, message: message, hint: hint, now: now, into: &actions)
        checkFinished(now: now, into: &actions)
        return actions
    }

    /// Lines in flight now.
    public var inFlightCount: Int { connections.values.reduce(0) { $0 + $1.inFlight.count } }

    public func elapsed(now: Double) -> Double { started.map { now - $0 } ?? 0 }

    // MARK: Helpers

    mutating func nextItem(now: Double, into actions: inout [Action]) -> Item? {
        if readyIndex < ready.count {
            let item = ready[readyIndex]
            readyIndex += 1
            if readyIndex == ready.count {
                ready.removeAll(keepingCapacity: true)
                readyIndex = 0
            }
            return item
        }
        while !stopping, lineIndex < lines.count {
            let entry = lines[lineIndex]
            lineIndex += 1
            switch entry {
            case .token(let line, let token):
                return Item(line: line, token: token.hex, apnsID: ids.next())
            case .malformed(let line, let text, let message):
                progress.failed += 1
                summary.malformed += 1
                record(
                    BulkResult(line: line, token: text, attempts: 0, error: .malformedToken, message: message),
                    into: &actions
                )
            case .vanished(let line, let token, let apnsID, let attempts):
                summary.failed += 1
                summary.uncertain += 1
                summary.outcomeUnknown += 1
                summary.missingFromTokens += 1
                progress.failed += 1
                record(
                    BulkResult(
                        line: line,
                        token: token,
                        apnsID: TextEncoding.lowercaseUUID(apnsID),
                        attempts: attempts,
                        uncertain: true,
                        error: .outcomeUnknown,
                        message:
                            "An earlier run sent this (as line \(line)) and stopped before its answer was recorded; the token file no longer holds this token, so it is not sent again."
                    ),
                    into: &actions
                )
            case .uncertain(let line, let token, let apnsID, let attempts):
                let id = TextEncoding.lowercaseUUID(apnsID)
                if configuration.resendUncertain && attempts < configuration.maxAttempts {
                    // The same apns-id, so the same collapse ID: a second delivery replaces the first.
                    var item = Item(line: line, token: token.hex, apnsID: id, attempts: attempts, uncertain: true)
                    item.uncertainBecause = .outcomeUnknown
                    item.inJournal = true
                    return item
                }
                summary.failed += 1
                summary.uncertain += 1
                summary.outcomeUnknown += 1
                progress.failed += 1
                record(
                    BulkResult(
                        line: line,
                        token: token.hex,
                        apnsID: id,
                        attempts: attempts,
                        uncertain: true,
                        error: .outcomeUnknown,
                        message: BulkDelivery.secondDelivery(configuration.pushType) == .actsTwice
                            ? "An earlier run sent this and stopped before its answer was recorded; it may have been delivered. \(notResentBecause)"
                            : "An earlier run sent this and stopped before its answer was recorded; it may have been delivered, so it is not sent again."
                    ),
                    into: &actions
                )
            }
        }
        return nil
    }

    /// Removes an answered send from its connection.
    mutating func take(_ sendID: SendID) -> InFlight? {
        guard let id = sendConnection[sendID], let flight = connections[id]?.finishStream(sendID) else { return nil }
        sendConnection[sendID] = nil
        return flight
    }

    /// Mutates the connection in place: a copy taken out and written back would copy its
    /// streams in flight at every answer.
    mutating func finishStream(_ sendID: SendID, on id: ConnectionID) {
        sendConnection[sendID] = nil
        connections[id]?.finishStream(sendID)
    }

    mutating func stop(
        _ cause: BulkStopCause,
        message: String?,
        hint: String?,
        now: Double,
        into actions: inout [Action]
    ) {
        if isFinished { return }
        if summary.stoppedBy == nil {
            summary.stoppedBy = cause
            summary.stopMessage = message
            summary.stopHint = hint
        }
        guard !stopping else {
            if cause == .interrupted {  // asked twice: stop waiting
                phase = .stopping(drainDeadline: nil)
                closeAll(into: &actions)
            }
            return
        }
        phase = .stopping(drainDeadline: now + configuration.drainTimeout)
        actions.append(.stopReading)
        for item in ready[readyIndex...] { leaveUnfinished(item) }
        for retry in retries { leaveUnfinished(retry.item) }
        ready.removeAll()
        readyIndex = 0
        retries.removeAll()
        for id in connections.keys.sorted() {
            guard let connection = connections[id], connection.state != .closed else { continue }
            switch connection.state {
            case .connecting:
                connections[id] = nil
                actions.append(.close(id))
            case .ready:
                if connection.inFlight.isEmpty {
                    connections[id] = nil
                    actions.append(.close(id))
                } else {
                    connections[id]?.state = .draining(deadline: now + configuration.drainTimeout)
                    actions.append(.goAway(id))
                }
            default:
                break
            }
        }
    }

    /// A line the run leaves without a result: counted as unanswered when the journal still
    /// says it was sent, else as never sent.
    mutating func leaveUnfinished(_ item: Item) {
        summary.unfinished += 1
        if item.inJournal { summary.unanswered += 1 }
    }

    /// Voids the journal's entry of a send that was not processed.
    mutating func clearJournal(_ item: inout Item, into actions: inout [Action]) {
        item.inJournal = false
        actions.append(.clearJournal(line: item.line))
    }

    mutating func checkFinished(now: Double, into actions: inout [Action]) {
        guard !isFinished, pendingBatch.isEmpty, inFlightCount == 0 else { return }
        let waiting = readyIndex < ready.count || !retries.isEmpty
        let inputDone = stopping || (feedFinished && lineIndex >= lines.count && !waiting)
        guard inputDone else { return }
        if !stopping { actions.append(.stopReading) }
        for id in connections.keys.sorted() where connections[id]?.state != .closed {
            actions.append(.close(id))
        }
        connections.removeAll()
        summary.neverSent = summary.unfinished - summary.unanswered
        summary.seconds = elapsed(now: now)
        summary.rate = summary.seconds > 0 ? Double(summary.results) / summary.seconds : 0
        phase = .finished(summary)
        actions.append(.finished(summary))
    }

    mutating func retryDelay(_ item: Item, _ response: PushResponse) -> Double {
        let jittered = backoff(attempt: item.attempts)
        guard let retryAfter = response.retryAfter else { return jittered }
        return max(jittered, min(Double(retryAfter), configuration.retryAfterCap))
    }

    mutating func backoff(attempt: Int) -> Double {
        let ceiling = min(configuration.backoffCap, configuration.backoffBase * pow(2, Double(max(0, attempt - 1))))
        return Double.random(in: 0...ceiling, using: &random)
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }

    /// Reasons that concern the credential, the topic or the notification itself rather than
    /// one device: every other token would get the same answer.
    public static func affectsEveryNotification(_ reason: APNsReason) -> Bool {
        guard reason.isKnown else { return false }
        let perDevice: Set<APNsReason> = [
            .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken, .tooManyRequests,
            .internalServerError, .serviceUnavailable, .idleTimeout, .shutdown,
        ]
        return !perDevice.contains(reason)
    }
}
