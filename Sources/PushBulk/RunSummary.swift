import Foundation
import PushCore

/// One answer for a whole run, from its results files (one file, or one per shard): the totals
/// by outcome, what is left to send, how each unfinished file continues, and warnings. The use
/// case of `apnsctl results summary`.
public struct RunSummary: Sendable, Encodable {
    /// How the lines of a run (or of one file) ended.
    public struct Outcomes: Sendable, Encodable, Equatable {
        /// Result lines.
        public var results = 0
        public var accepted = 0
        /// Answers other than 200, by APNs' reason (`Unregistered`: 3); an answer without a
        /// reason by its status (`HTTP 400`).
        public var rejected: [String: Int] = [:]
        /// Lines with no final answer, by their error code (`timeout`, `connection_closed`...),
        /// `outcome_unknown` and `malformed_token` aside.
        public var failed: [String: Int] = [:]
        /// Lines that are not device tokens.
        public var malformed = 0
        /// Lines marked `uncertain`: an answer was lost, so the device may have the
        /// notification more than once (they are counted by their outcome too).
        public var uncertain = 0
        /// Lines an earlier run had in flight when it stopped, not sent again: they may or may
        /// not have been delivered.
        public var outcomeUnknown = 0

        public init() {}

        public var rejectedTotal: Int { rejected.values.reduce(0, +) }
        public var failedTotal: Int { failed.values.reduce(0, +) }

        enum CodingKeys: String, CodingKey {
            case results, accepted, rejected, failed, malformed, uncertain, outcomeUnknown
            case rejectedTotal, failedTotal
        }

        /// The counts, with the totals of the rejected and the failed beside them.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(results, forKey: .results)
            try container.encode(accepted, forKey: .accepted)
            try container.encode(rejected, forKey: .rejected)
            try container.encode(rejectedTotal, forKey: .rejectedTotal)
            try container.encode(failed, forKey: .failed)
            try container.encode(failedTotal, forKey: .failedTotal)
            try container.encode(malformed, forKey: .malformed)
            try container.encode(uncertain, forKey: .uncertain)
            try container.encode(outcomeUnknown, forKey: .outcomeUnknown)
        }

        /// Counts one result line.
        mutating func count(_ result: BulkResult.Recorded) {
            results += 1
            if result.uncertain { uncertain += 1 }
            if result.isAccepted {
                accepted += 1
            } else if let status = result.status {
                rejected[result.reason ?? "HTTP \(status)", default: 0] += 1
            } else if result.error == BulkResultCode.malformedToken.rawValue {
                malformed += 1
            } else if result.error == BulkResultCode.outcomeUnknown.rawValue {
                outcomeUnknown += 1
            } else {
                failed[result.error ?? "no_answer", default: 0] += 1
            }
        }
    }

    /// Where a results file's run stands.
    public enum FileState: String, Sendable, Encodable {
        /// Every line has a result (the file ends with its end record).
        case finished
        /// The run stopped and recorded why (`stop_cause`): the resume command continues it.
        case stopped
        /// The run ended without a stop or end record (killed, or a crash): its journal says
        /// what was in flight, and the resume command continues it.
        case interrupted
        /// The run did not finish and its journal is gone: a resume is refused unless it accepts
        /// sending again what was in flight (see ``BulkRunError/journalMissing(path:inFlightBound:)``).
        case journalMissing = "journal_missing"
        /// A run or resume is writing the file now.
        case running
        /// Its results were printed to standard output, with no header and no journal: it cannot
        /// be continued.
        case notResumable = "not_resumable"
    }

    /// One results file of the run.
    public struct FileReport: Sendable, Encodable {
        public var path: String
        public var shard: RunShard?
        public var state: FileState
        /// Why the run stopped, when it recorded a stop (`interrupted`, `credential_rejected`...).
        public var stopCause: String?
        /// APNs' reason, when an answer stopped the run.
        public var stopReason: String?
        /// The process writing it now, for a file that is ``FileState/running``.
        public var writer: String?
        /// Sends its journal holds without a result: in flight when the run stopped.
        public var inFlight = 0
        public var outcomes = Outcomes()
        /// What continues the run, for a file that is not finished (nil when it is, when a run
        /// writes it now, or when its header does not record its options); a front end renders
        /// it as its own command.
        public var continuation: BulkRunContinuation?

        public var isFinished: Bool { state == .finished }

        enum CodingKeys: String, CodingKey {
            case path, shard, state, stopCause, stopReason, writer, inFlight, outcomes
        }
    }

    /// What the run has not done yet.
    public struct LeftToSend: Sendable, Encodable, Equatable {
        /// Lines with a result that is not a final answer: failed (by code) and
        /// `outcome_unknown`. A resume skips them (they have a result); a new run sends them.
        public var withoutFinalAnswer = 0
        /// Files whose run did not finish: the rest of their tokens (not counted here) is sent
        /// by their resume command.
        public var unfinishedFiles = 0
        /// Of those files' lines, sends in flight when they stopped (from their journals).
        public var inFlight = 0
        /// Shards of the run of which no results file was given: their tokens are not counted.
        public var shardsNotGiven = 0

        public var isEmpty: Bool { self == LeftToSend() }
    }

    /// Something a person should know before acting on the results.
    public struct Warning: Sendable, Encodable, Equatable {
        public var code: Code
        public var message: String
        /// The file it is about, when it is about one.
        public var path: String?

        public enum Code: String, Sendable, Encodable {
            /// Many BadDeviceToken answers from one environment: the tokens most likely belong
            /// to the other one, and must not be deleted as dead.
            case tokensOfOtherEnvironment = "tokens_of_other_environment"
            /// Fewer results files than the run has shards.
            case shardsNotGiven = "shards_not_given"
            /// An unfinished run whose journal is gone.
            case journalMissing = "journal_missing"
            /// A run writes the file now: its counts are a snapshot.
            case running
        }
    }

    /// The run, as its first header records it.
    public struct Run: Sendable, Encodable {
        public var topic: String?
        public var pushType: String
        public var gateway: String
        /// The environment the run used (as its options recorded it, or from an Apple host).
        public var environment: String?
        public var credential: String
        /// The number of shards; nil for a run that was not divided.
        public var shards: Int?
    }

    /// Nil when the only file has no header (results printed to standard output).
    public var run: Run?
    public var totals = Outcomes()
    public var leftToSend = LeftToSend()
    public var files: [FileReport] = []
    public var warnings: [Warning] = []

    /// Every line of every shard accepted, and nothing left to send.
    public var isComplete: Bool { totals.accepted == totals.results && leftToSend.isEmpty }

    /// Reads the results files of one run (``RunResults/open(_:)``) and sums them up.
    public static func read(_ paths: [String]) throws -> RunSummary {
        let results = try RunResults.open(paths)
        var summary = RunSummary()
        var byPath: [String: Int] = [:]
        for (index, file) in results.files.enumerated() {
            summary.files.append(report(file))
            byPath[file.path] = index
        }
        try results.forEachResult { file, result in
            summary.files[byPath[file.path]!].outcomes.count(result)
            summary.totals.count(result)
        }
        summary.finish(results)
        return summary
    }

    /// The run, what is left and the warnings, once every line is counted.
    private mutating func finish(_ results: RunResults) {
        if let first = results.files.first, let header = first.header {
            run = Run(
                topic: header.topic,
                pushType: header.pushType,
                gateway: header.gateway,
                environment: Self.environment(of: header),
                credential: header.credential,
                shards: first.shard?.n
            )
        }
        leftToSend.withoutFinalAnswer = totals.failedTotal + totals.outcomeUnknown
        for file in files where !file.isFinished {
            leftToSend.unfinishedFiles += 1
            leftToSend.inFlight += file.inFlight
            if file.state == .journalMissing {
                warnings.append(
                    Warning(
                        code: .journalMissing,
                        message:
                            "The run did not finish and its journal (\(ResumeState.journalPath(forResults: file.path))) is missing: a resume is refused until the journal is back beside it, or it accepts that what was in flight may be delivered twice.",
                        path: file.path
                    )
                )
            }
            if let writer = file.writer {
                warnings.append(
                    Warning(
                        code: .running,
                        message:
                            "A run is writing this file now (\(writer)): its counts are those of this moment.",
                        path: file.path
                    )
                )
            }
        }
        if let shards = run?.shards {
            let given = Set(files.compactMap { $0.shard?.k }).count
            leftToSend.shardsNotGiven = max(0, shards - given)
            if given < shards {
                let list = Set(files.compactMap(\.shard)).sorted { $0.k < $1.k }.map(\.description)
                    .joined(separator: ", ")
                warnings.append(
                    Warning(
                        code: .shardsNotGiven,
                        message:
                            "The run has \(shards) shards and the results of \(given) were given (\(list)): the tokens of the other \(shards - given) are not counted.",
                        path: nil
                    )
                )
            }
        }
        if let warning = Self.environmentWarning(totals, environment: run?.environment) { warnings.append(warning) }
    }

    /// A file's report before its lines are counted: its state, and what continues it.
    private static func report(_ file: RunResults.File) -> FileReport {
        let state = file.state
        var report = FileReport(path: file.path, shard: file.shard, state: .finished)
        report.inFlight = state.inFlight.count
        if state.finished {
            return report
        }
        if file.header == nil {
            report.state = .notResumable
            return report
        }
        report.stopCause = state.lastStop?.cause
        report.stopReason = state.lastStop?.reason
        if let writer = file.writer {
            report.state = .running
            report.writer = writer
            return report
        }
        report.state =
            state.journalMissing ? .journalMissing : state.lastStop != nil ? .stopped : .interrupted
        // The last header: a resume with another credential after a stop the credential caused
        // records its own, and the command continues with that one.
        let tokens = state.header?.parameters?.tokens
        report.continuation = state.header?.continuation(
            resultsPath: file.path,
            source: tokens == "-" || tokens == nil ? .pipe(producer: nil) : .file(tokens ?? ""),
            credentialStopped: state.lastStop?.cause == BulkStopCause.credentialRejected.rawValue
        )
        return report
    }

    /// The environment a run used: as its options recorded it, else the one of an Apple host.
    static func environment(of header: BulkRunHeader) -> String? {
        if let given = header.parameters?.options["environment"]?.first { return given }
        let host = header.gateway.split(separator: ":").first.map { String($0).lowercased() } ?? ""
        switch host {
        case "api.push.apple.com": return PushEnvironment.production.rawValue
        case "api.sandbox.push.apple.com", "api.development.push.apple.com": return PushEnvironment.sandbox.rawValue
        default: return nil
        }
    }
}
