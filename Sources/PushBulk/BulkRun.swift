import CredentialFormats
import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of one bulk run: its results file (header, result lines, stop records), its
/// journal, the lock that makes them one run's at a time, the check that a resume continues
/// the same run, and what is left when it ends. No networking: the sender only writes through
/// ``output``.
///
/// Lifecycle: ``open(header:results:resume:)`` locks and prepares the files (nothing is
/// created or changed when it throws); the sender runs; ``conclude(_:tokensRead:)`` says
/// whether the run is complete, records a stop, deletes the journal only when every line has a
/// result in a file that still exists, and releases the lock.
public final class BulkRun: @unchecked Sendable {
    /// Where the results go: nil for standard output.
    public let resultsPath: String?
    /// The results file this run continues, when it is a resume.
    public let resumedFrom: String?
    public let state: ResumeState?
    public let output: BulkOutput
    /// True when a resume goes on with another credential after a stop the credential caused.
    public let credentialChanged: Bool
    /// What the run records in its results file: the parameters a resume must repeat.
    public let header: BulkRunHeader
    /// A resume that reads another token file than the run began with (their fingerprints
    /// differ): the first file as the run recorded it, so that the person is told that its
    /// tokens that are not in the new file will not be sent.
    public var tokenFileChanged: String? {
        guard let recorded = state?.header, let then = recorded.tokensFingerprint,
            let now = header.tokensFingerprint, then != now
        else { return nil }
        return recorded.parameters?.tokens ?? "the token file the run began with"
    }
    private var locks: [FileLock]
    private let createdNew: Bool
    /// Header lines this run wrote: not results.
    private let headerLines: Int

    private init(
        resultsPath: String?,
        resumedFrom: String?,
        state: ResumeState?,
        output: BulkOutput,
        credentialChanged: Bool,
        header: BulkRunHeader,
        locks: [FileLock],
        createdNew: Bool
    ) {
        self.resultsPath = resultsPath
        self.resumedFrom = resumedFrom
        self.state = state
        self.output = output
        self.credentialChanged = credentialChanged
        self.header = header
        self.locks = locks
        self.createdNew = createdNew
        headerLines = output.results.linesWritten
    }

    /// Opens the files of a run described by `header`: a new results file (`results`), the
    /// continuation of `resume` (appending to it, or to a new `results`), or neither (results on
    /// standard output, no journal). A resume of an unfinished run whose journal is gone is
    /// refused (``BulkRunError/journalMissing(path:inFlightBound:)``) unless
    /// `acceptMissingJournal` takes the risk of sending again what was in flight.
    ///
    /// The header's ``BulkRunHeader/resendUncertain`` is the caller's choice, nil when it made
    /// none: a new run then takes its push type's default
    /// (``BulkDelivery/resendsUncertainByDefault(_:)``), a resume the policy the run recorded
    /// (nil for a run recorded before there was one). The opened run's ``header`` holds the
    /// outcome.
    public static func open(
        header: BulkRunHeader,
        results: String?,
        resume: String?,
        acceptMissingJournal: Bool = false
    ) throws -> BulkRun {
        var header = header
        var locks: [FileLock] = []
        var state: ResumeState?
        var credentialChanged = false
        if let resume {
            // The lock comes first: what the file holds is read only once no one else writes it.
            locks.append(try lockResults(resume))
            let loaded = try ResumeState.load(resultsPath: resume)
            credentialChanged = try checkSameRun(loaded, header, path: resume)
            if loaded.journalMissing, !acceptMissingJournal {
                let connections = loaded.header?.parameters?.connections ?? 1
                throw BulkRunError.journalMissing(
                    path: resume,
                    inFlightBound: max(connections, 1) * BulkEngine.Configuration().maxInFlightPerConnection
                )
            }
            state = loaded
            if header.resendUncertain == nil { header.resendUncertain = loaded.header?.resendUncertain }
        } else if header.resendUncertain == nil {
            header.resendUncertain = BulkDelivery.resendsUncertainByDefault(PushType(header.pushType))
        }
        guard let path = results ?? resume else {
            return BulkRun(
                resultsPath: nil,
                resumedFrom: nil,
                state: nil,
                output: BulkOutput(results: .standardOutput, journal: nil),
                credentialChanged: false,
                header: header,
                locks: [],
                createdNew: false
            )
        }
        let journalPath = ResumeState.journalPath(forResults: path)
        if let results, results != resume {
            if FileManager.default.fileExists(atPath: results) {
                _ = try lockResults(results)  // a run using it now is named
                throw BulkRunError.resultsExist(path: results)
            }
            let file = try AppendFile.open(path: results, exclusive: true)
            locks.append(try lockResults(results))
            file.append(header.jsonLine)
            file.flush()
            // A new run starts a new journal.
            let journal = try AppendFile.open(path: journalPath, truncateTo: 0)
            return BulkRun(
                resultsPath: results,
                resumedFrom: resume,
                state: state,
                output: BulkOutput(results: file, journal: journal),
                credentialChanged: credentialChanged,
                header: header,
                locks: locks,
                createdNew: true
            )
        }
        // Continuing in place: a torn last line or journal group is cut before anything is added.
        // A finished run continued (its token file grew) is unfinished again from now: its end
        // record is cut before anything is sent, so that a resume after this one is killed looks
        // for this one's journal rather than taking the old end as its own.
        let file = try AppendFile.open(path: path, truncateTo: state?.endRecordStart ?? state?.validLength)
        if credentialChanged {
            file.append(header.jsonLine)
            file.flush()
        }
        let journal = try AppendFile.open(
            path: journalPath,
            truncateTo: state?.journalExists == true ? state?.journalValidLength : 0
        )
        return BulkRun(
            resultsPath: path,
            resumedFrom: resume,
            state: state,
            output: BulkOutput(results: file, journal: journal),
            credentialChanged: credentialChanged,
            header: header,
            locks: locks,
            createdNew: false
        )
    }

    /// A resume must continue the run the results were started for; returns true when only the
    /// credential differs and the run stopped because of its credential (then another one for
    /// the same app, topic, push type and gateway may go on).
    static func checkSameRun(_ state: ResumeState, _ header: BulkRunHeader, path: String) throws -> Bool {
        guard let recorded = state.header else {
            throw BulkRunError.noRunHeader(path: path)
        }
        var differences = recorded.differences(from: header)
        var credentialChanged = false
        if differences.first == "the credential", state.lastStop?.cause == BulkStopCause.credentialRejected.rawValue {
            differences.removeFirst()
            credentialChanged = true
        }
        guard differences.isEmpty else {
            throw BulkRunError.runMismatch(
                path: path,
                differences: differences,
                credentialDiffers: recorded.credential != header.credential
                    && state.lastStop?.cause != BulkStopCause.credentialRejected.rawValue
            )
        }
        return credentialChanged
    }

    /// Ends the run's use of its files and says how it really ended: a results file that
    /// vanished, results or journal writes that failed, or a resume that read no tokens while
    /// the run was unfinished stop it (whatever the sender thought). A stopped run records why
    /// in its results; only a complete one loses its journal.
    public func conclude(_ summary: BulkSummary, tokensRead: Int) -> BulkSummary {
        var summary = summary
        output.flushResults()
        output.flushJournal()
        var vanished = false
        if let resultsPath, !output.results.isStillAtPath {
            vanished = true
            summary.stoppedBy = .outputFailed
            summary.stopMessage =
                "The results file \(resultsPath) was deleted or replaced during the run: the results written to it are lost, and the run cannot be resumed from it."
            summary.stopHint =
                "The notifications already sent were delivered; start a new run for the devices that still need it."
            summary.resultsLost = true
        } else if let failure = output.failure, summary.stoppedBy == nil || summary.stoppedBy == .interrupted {
            summary.stoppedBy = .outputFailed
            summary.stopMessage = "The results cannot be written (\(failure)); nothing more is sent."
            summary.stopHint = output.failureRemedy
        }
        if summary.stoppedBy == nil, let state, state.isUnfinished, tokensRead == 0 {
            summary.stoppedBy = .noTokens
            summary.stopMessage =
                "No tokens were read, but the run being resumed is not finished; nothing was sent and its journal is kept."
            summary.stopHint = "Give the same tokens the run started with."
        }
        summary.resultsWritten = output.results.linesWritten - headerLines
        if let cause = summary.stoppedBy, !vanished, resultsPath != nil, output.failure == nil {
            output.results.append(
                BulkStopRecord(cause: cause.rawValue, reason: summary.stopReason, credential: header.credential)
                    .jsonLine
            )
        }
        let complete = summary.stoppedBy == nil && output.failure == nil
        if complete, resultsPath != nil {
            // Written before the journal goes: a file without it and without its journal is a
            // run that did not finish and lost what says which notifications were in flight.
            output.results.append(
                BulkEndRecord(
                    credential: header.credential,
                    results: summary.resultsWritten + (resumedFrom == resultsPath ? state?.finalCount ?? 0 : 0)
                ).jsonLine
            )
            output.flushResults()
        }
        output.close()
        if complete, let resultsPath {
            unlink(ResumeState.journalPath(forResults: resultsPath))
        }
        release()
        return summary
    }

    /// The run failed before it sent anything: a new results file holding nothing but its
    /// header, and its journal, are removed (so that they are not refused as existing next time).
    public func abandon() {
        output.close()
        if createdNew, let resultsPath, Self.holdsNoResults(resultsPath) {
            unlink(resultsPath)
            unlink(ResumeState.journalPath(forResults: resultsPath))
        }
        release()
    }

    public func release() {
        for lock in locks { lock.close() }
        locks = []
    }

    /// True when the file has nothing but run headers (or nothing at all).
    static func holdsNoResults(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.split(separator: UInt8(ascii: "\n")).allSatisfy { BulkRunHeader.parse($0) != nil }
    }
}
