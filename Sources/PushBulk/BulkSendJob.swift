import Foundation
import PushCore
import PushGateway

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bulk send as one call: one notification to every token of a file (or standard input),
/// with the run's files, resume and cleanup, for a program that is not the command line.
///
/// ``run(_:observer:)`` checks everything that can be refused before any file is made or
/// locked, opens the run's files (``BulkRun``), sends (``BulkSender``), and concludes the run:
/// a stop is recorded in the results and the journal is deleted only when every line has a
/// result. The observer hears when sending starts (to show progress, or to stop the run) and
/// when it ends, whichever way.
public enum BulkSendJob {
    /// What to send, to which tokens, with which files.
    public struct Request: Sendable {
        public var configuration: GatewayConfiguration
        /// The notification sent to every token; its own token is never used.
        public var template: NotificationTemplate
        /// A token file, or "-" for standard input.
        public var tokens: String
        /// A new results file; nil with `resume` nil: results on standard output, no journal.
        public var results: String?
        /// The results file of a run to continue.
        public var resume: String?
        /// The engine's options; its policy for lost answers is set from ``resendUncertain``.
        public var options: BulkEngine.Configuration
        /// What becomes of a notification whose answer was lost (a timeout, a reset, a connection
        /// lost in flight, or a run killed with it in flight): true, sent again with the same
        /// `apns-id` and collapse ID; false, at most once. Nil: a new run takes its push type's
        /// default (``BulkDelivery/resendsUncertainByDefault(_:)``: yes unless a second delivery
        /// acts twice), a resume the policy the run recorded.
        public var resendUncertain: Bool?
        public var allowDuplicates: Bool
        /// The shard of the token list this run sends (the tokens ``RunShard/holds(token:)``),
        /// recorded in its header; nil for every token. A resume gives the run's own shard.
        public var shard: RunShard?
        /// Resume a run that did not finish although its journal is gone, accepting that what
        /// was in flight when it stopped is sent again (``BulkRunError/journalMissing(path:inFlightBound:)``).
        public var resumeWithoutJournal: Bool
        /// The options that started the run, recorded in its header (with this request's token
        /// input and connections) so that a stopped run can say how to continue it; nil for a program that resumes through this call instead.
        public var parameters: BulkRunParameters?

        public init(
            configuration: GatewayConfiguration,
            template: NotificationTemplate,
            tokens: String,
            results: String? = nil,
            resume: String? = nil,
            options: BulkEngine.Configuration = .init(),
            allowDuplicates: Bool = false,
            resumeWithoutJournal: Bool = false,
            parameters: BulkRunParameters? = nil,
            resendUncertain: Bool? = nil,
            shard: RunShard? = nil
        ) {
            self.resendUncertain = resendUncertain
            self.shard = shard
            self.configuration = configuration
            self.template = template
            self.tokens = tokens
            self.results = results
            self.resume = resume
            self.options = options
            self.allowDuplicates = allowDuplicates
            self.resumeWithoutJournal = resumeWithoutJournal
            self.parameters = parameters
        }
    }

    /// A run whose files are open, as an observer sees it before the first send.
    public struct Started: Sendable {
        public let sender: BulkSender
        public let run: BulkRun
        /// Where the tokens come from, as a resume must give them again.
        public let source: TokenSource
        /// The token input as given (a path, or - for standard input).
        public let tokens: String
        /// The shard the run sends; nil for every token.
        public let shard: RunShard?

        /// Lines left to do, counted first for a regular file (nil for standard input): what a
        /// progress display shows as its total.
        public func remainingLines() -> Int? {
            TokenFeed.countEntries(path: tokens, shard: shard).map { max(0, $0 - (run.state?.finalCount ?? 0)) }
        }
    }

    /// The end of a run: how it ended, what was recorded, and how it can be continued.
    public struct Outcome: Sendable {
        public let summary: BulkSummary
        /// The results file (nil: standard output).
        public let resultsPath: String?
        /// The parameters the run recorded, for a resume.
        public let recorded: BulkRunHeader
        public let source: TokenSource
        public let credentialChanged: Bool

        /// What continues this run, from what it recorded: nil when it has no results file (or
        /// lost it) or was started without its parameters.
        public var continuation: BulkRunContinuation? {
            guard let resultsPath, !summary.resultsLost else { return nil }
            return recorded.continuation(
                resultsPath: resultsPath,
                source: source,
                credentialStopped: summary.stoppedBy == .credentialRejected
            )
        }
    }

    /// Runs the request to its end. Throws before sending when the run's files or tokens
    /// cannot be used (``BulkRunError``, leaving no file behind) or the notification is
    /// invalid, and when no connection could be made at all (``GatewayError``); a run that
    /// sent and stopped early returns, with the cause in its summary.
    public static func run(
        _ request: Request,
        observer: some BulkSendObserver
    ) async throws -> Outcome {
        var header = BulkRunHeader(
            credential: request.configuration.credential.fingerprint,
            template: request.template,
            gateway: request.configuration.endpoint.description,
            parameters: request.parameters.map {
                var parameters = $0
                parameters.tokens = request.tokens
                parameters.connections = request.options.connections
                return parameters
            }
        )
        header.tokensFingerprint = BulkRunHeader.fingerprint(ofTokenFile: request.tokens)
        header.resendUncertain = request.resendUncertain
        header.shard = request.shard
        let source: TokenSource = request.tokens == "-" ? await .standardInput() : .file(request.tokens)
        if request.tokens == "-", isatty(STDIN_FILENO) == 1 {
            _ = try TokenFeed.open(path: "-")  // refused, with its message
        }
        let run = try BulkRun.open(
            header: header,
            results: request.results,
            resume: request.resume,
            acceptMissingJournal: request.resumeWithoutJournal
        )
        // The policy the run goes by: asked for, recorded by the run resumed, or the push type's.
        var options = request.options
        let policy = run.header.resendUncertain
        options.resendLostAnswers = policy ?? BulkDelivery.resendsUncertainByDefault(request.template.pushType)
        // A run recorded before the policy existed sent without collapse IDs of its own: what it
        // had in flight is sent again only when asked.
        options.resendUncertain = policy ?? false
        let feed: TokenFeed
        let sender: BulkSender
        do {
            feed = try TokenFeed.open(
                path: request.tokens,
                resume: run.state,
                allowDuplicates: request.allowDuplicates,
                shard: request.shard
            )
            sender = try BulkSender(
                configuration: request.configuration,
                template: request.template,
                options: options,
                feed: feed,
                output: run.output
            )
        } catch {
            run.abandon()
            throw error
        }
        observer.willSend(
            Started(sender: sender, run: run, source: source, tokens: request.tokens, shard: request.shard)
        )
        var summary: BulkSummary
        do {
            summary = try await sender.run()
        } catch {
            observer.didEnd()
            run.abandon()
            throw error
        }
        observer.didEnd()
        summary = run.conclude(summary, tokensRead: feed.entriesRead)
        return Outcome(
            summary: summary,
            resultsPath: run.resultsPath,
            recorded: run.header,
            source: source,
            credentialChanged: run.credentialChanged
        )
    }
}

/// What a caller of ``BulkSendJob/run(_:observer:)`` hears while the run goes on.
public protocol BulkSendObserver: Sendable {
    /// The files are open and nothing is sent yet: a place to start a progress display, or
    /// to keep `started.sender` for ``BulkSender/stop()``.
    func willSend(_ started: BulkSendJob.Started)
    /// Sending is over (before the run's files are concluded), whether it ended or failed.
    func didEnd()
}
