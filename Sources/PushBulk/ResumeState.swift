import Foundation
import PushCore

/// What earlier runs left in a results file and its journal, matched by token (never by line
/// number, so a token file whose lines moved, grew or shrank is resumed correctly): tokens with
/// a final result (skipped), and tokens sent without a recorded answer (in flight when the run
/// stopped; they may have been delivered).
public final class ResumeState: @unchecked Sendable {
    public enum Status: Equatable {
        case pending
        case done
        case uncertain(apnsID: UUID, attempts: Int)
    }

    /// A send the journal holds without a result or a clear.
    public struct InFlight: Sendable, Equatable {
        public var line: Int
        public var token: String
        public var apnsID: UUID
        public var attempts: Int
    }

    private let done: Set<UInt64>
    public let inFlight: [UInt64: InFlight]
    /// Result lines in the file.
    public let finalCount: Int
    /// Byte length of the results file up to its last complete line (a line torn by a crash or
    /// a full disk is dropped, and the file is cut there before appending).
    public let validLength: Int
    /// Byte length of the journal up to its last committed group.
    public let journalValidLength: Int
    /// The run the results belong to: the last header (a resume with another credential after a
    /// stop caused by the credential appends its own).
    public let header: BulkRunHeader?
    /// Why the last run stopped, when it recorded a stop and nothing ran after it.
    public let lastStop: BulkStopRecord?
    /// True when a journal exists: a run that finished every line deletes it.
    public let journalExists: Bool
    /// True when the file ends with the record of a run that gave every token a result.
    public var finished: Bool { endRecordStart != nil }
    /// Where that end record starts, when the file ends with one: a run that continues the
    /// file cuts it there.
    public let endRecordStart: Int?

    /// The run did not finish and its journal is gone (deleted, or the results file moved
    /// without it): what was in flight when it stopped cannot be known, and a resume would send
    /// those notifications again without marking them uncertain.
    public var journalMissing: Bool { header != nil && !journalExists && !finished }

    /// The run is not finished: a journal is left, or the last run recorded a stop.
    public var isUnfinished: Bool { journalExists || lastStop != nil }

    init(
        done: Set<UInt64>,
        inFlight: [UInt64: InFlight],
        finalCount: Int,
        validLength: Int,
        journalValidLength: Int,
        header: BulkRunHeader?,
        lastStop: BulkStopRecord?,
        journalExists: Bool,
        endRecordStart: Int?
    ) {
        self.done = done
        self.inFlight = inFlight
        self.finalCount = finalCount
        self.validLength = validLength
        self.journalValidLength = journalValidLength
        self.header = header
        self.lastStop = lastStop
        self.journalExists = journalExists
        self.endRecordStart = endRecordStart
    }

    public func status(token: DeviceToken) -> Status { status(key: BulkResult.key(token: token.hex)) }

    /// The same, for a token's key (``BulkResult/key(token:)``) a caller has made already.
    public func status(key: UInt64) -> Status {
        if done.contains(key) { return .done }
        if let flight = inFlight[key] { return .uncertain(apnsID: flight.apnsID, attempts: flight.attempts) }
        return .pending
    }

    public func isDone(malformedText text: String) -> Bool { done.contains(BulkResult.key(malformedText: text)) }

    /// The journal that belongs to a results file.
    public static func journalPath(forResults path: String) -> String { path + ".journal" }

    /// Reads a results file written by a bulk run and, when it exists, its journal.
    public static func load(resultsPath path: String) throws -> ResumeState {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw BulkRunError.resultsUnreadable(path: path)
        }
        var done = Set<UInt64>()
        var finalCount = 0
        var validLength = 0
        var header: BulkRunHeader?
        var lastStop: BulkStopRecord?
        var endRecordStart: Int?
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            var lineNumber = 0
            while start < bytes.count {
                guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { break }  // torn: ignore
                lineNumber += 1
                let record = UnsafeBufferPointer(rebasing: bytes[start..<newline])
                if let found = BulkRunHeader.parse(record) {
                    header = found
                    lastStop = nil
                    endRecordStart = nil
                } else if let stop = BulkStopRecord.parse(record) {
                    lastStop = stop
                    endRecordStart = nil
                } else if BulkEndRecord.parse(record) != nil {
                    endRecordStart = start
                } else if !record.isEmpty {
                    guard let (_, key) = BulkResult.parseKey(record) else {
                        throw BulkRunError.notAResultLine(path: path, number: lineNumber)
                    }
                    finalCount += 1
                    done.insert(key)
                    // A result after a stop record: a later run went on, and its own stop (if
                    // any) comes after.
                    lastStop = nil
                    endRecordStart = nil
                }
                start = newline + 1
                validLength = start
            }
        }
        var inFlight: [UInt64: InFlight] = [:]
        var journalValidLength = 0
        let journal = journalPath(forResults: path)
        let journalData = FileManager.default.contents(atPath: journal)
        if let journalData {
            let (entries, length) = BulkJournal.read(journalData)
            journalValidLength = length
            for entry in entries {
                let key = BulkResult.key(token: entry.token)
                if entry.send, let id = entry.apnsID {
                    if !done.contains(key) {
                        inFlight[key] = InFlight(
                            line: entry.line,
                            token: entry.token,
                            apnsID: id,
                            attempts: entry.attempt
                        )
                    }
                } else {
                    inFlight[key] = nil
                }
            }
        }
        return ResumeState(
            done: done,
            inFlight: inFlight,
            finalCount: finalCount,
            validLength: validLength,
            journalValidLength: journalValidLength,
            header: header,
            lastStop: lastStop,
            journalExists: journalData != nil,
            endRecordStart: endRecordStart
        )
    }
}
