import ArgumentParser
import CredentialFormats
import Foundation
import PushBulk

struct Results: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "results",
        abstract: "Read the results files of a bulk send (`send --tokens`): one answer for a run and all its shards.",
        discussion: """
            `apnsctl results summary FILE…` sums up a run from its results file, or from the \
            results files of all its shards; `apnsctl results tokens FILE… --unregistered` lists \
            the tokens to delete.

            Exit status: that of the subcommand run (see each one's --help); 0 with none, which \
            prints this help; 64 usage error.

            Examples:
              apnsctl results summary sent.jsonl
              apnsctl results tokens sent.jsonl --unregistered
            """,
        subcommands: [ResultsSummary.self, ResultsTokens.self]
    )
}

struct ResultsSummary: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Totals by outcome, what is left to send and how to continue, for a run and all its shards.",
        discussion: """
            Give the results file of a run, or the results files of all the shards of one run \
            (`send --shard K/N` writes one per shard): they are read together as one run. Files of \
            different runs (another notification, credential, gateway, token file or number of \
            shards) are refused, naming what differs. Nothing is sent and no file is changed; a \
            file a run is writing now is read as it is at that moment.

            Printed: the totals by outcome (accepted; rejected by APNs' reason; failed, with no \
            final answer, by code; malformed lines; uncertain; outcome_unknown), what is left to \
            send (lines with no final answer, files whose run did not finish, with what was in \
            flight when they stopped, shards whose file was not given), the command that \
            continues each unfinished file, and warnings: among them, many BadDeviceToken answers \
            (at least 20, and more than half of the rejections) mean the tokens most likely \
            belong to the other environment and must not be deleted as dead. The commands print \
            the recorded paths as the run was given them: run them in the folder the run started in.

            Exit status: 0 every line of every shard accepted and every file finished; 1 some \
            line rejected, failed or malformed, or something left to send (an unfinished file, \
            a shard not given); 2 a file cannot be read; 64 usage error, a file that is not a \
            bulk run's results, or files of different runs.

            Examples:
              apnsctl results summary sent.jsonl
              apnsctl results summary sent.jsonl --json
            """
    )

    @Argument(
        help: ArgumentHelp("The results files: one run's, or those of all its shards.", valueName: "FILE"),
        completion: .file()
    )
    var files: [String]

    @Flag(help: "Print the summary as JSON (docs/schemas/results-summary.schema.json).")
    var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("Give the results file of a run, or those of its shards.") }
    }

    func run() async throws {
        let summary = try await withUserErrors { try RunSummary.read(files) }
        let program = CommandLine.arguments.first
        if json {
            try printJSON(RunSummaryOutput(summary, program: program))
        } else {
            print(RunSummaryText.render(summary, files: files, program: program, style: .stdout))
        }
        if !summary.isComplete { throw ExitStatus.problem }
    }
}

struct ResultsTokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "The tokens APNs answered 410 Unregistered (to delete), or BadDeviceToken, from a run's results.",
        discussion: """
            Reads the results files of one run (or of all its shards, as `results summary` does) \
            and prints one token a line: with --unregistered, the token and, after a tab, the \
            time APNs says it stopped being valid (RFC 3339, UTC): delete the token from your \
            backend unless the device registered it again after that time. With --bad, the \
            tokens APNs answered 400 BadDeviceToken; when they are many (at least 20, and more \
            than half of the rejections) they most likely belong to the other environment, and a \
            warning on standard error says so: do not delete those. With --unanswered, the \
            tokens whose line has no final answer (failed, or outcome_unknown), as a token file \
            for a new run. --json prints one JSON object a line instead (token, reason, \
            timestamp, error, file, line).

            Exit status: 0 the tokens were listed (there may be none); 2 a file cannot be read; \
            64 usage error, a file that is not a bulk run's results, or files of different runs.

            Examples:
              apnsctl results tokens sent.jsonl --unregistered
              apnsctl results tokens sent.jsonl --bad --json
            """
    )

    @Argument(
        help: ArgumentHelp("The results files: one run's, or those of all its shards.", valueName: "FILE"),
        completion: .file()
    )
    var files: [String]

    @Flag(help: "The tokens APNs answered 410 Unregistered, each with APNs' timestamp.")
    var unregistered = false

    @Flag(help: "The tokens APNs answered 400 BadDeviceToken.")
    var bad = false

    @Flag(help: "The tokens whose line has no final answer (failed, or outcome_unknown).")
    var unanswered = false

    @Flag(help: "One JSON object a line instead of tab-separated text.")
    var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("Give the results file of a run, or those of its shards.") }
        let chosen = [unregistered, bad, unanswered].filter { $0 }.count
        if chosen != 1 { throw ValidationError("Give one of --unregistered, --bad and --unanswered.") }
    }

    func run() async throws {
        let kind: RunSummary.TokenKind = unregistered ? .unregistered : bad ? .badDeviceToken : .unanswered
        var buffer = ""
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let warnings = try await withUserErrors {
            try RunSummary.tokens(kind, in: files) { listed in
                if json {
                    buffer += String(decoding: try encoder.encode(listed), as: UTF8.self) + "\n"
                } else {
                    let token = Untrusted.display(listed.token)
                    buffer +=
                        token + (kind == .unregistered ? "\t" + Untrusted.display(listed.timestamp ?? "") : "") + "\n"
                }
                if buffer.utf8.count >= 1 << 16 {
                    print(buffer, terminator: "")
                    buffer = ""
                    // Standard output closed (a pager quit): the rest would be read for nothing.
                    if StandardOutput.failure != nil { throw ExitStatus.couldNotCheck }
                }
            }
        }
        print(buffer, terminator: "")
        if json { JSONFailure.printed = true }
        for warning in warnings {
            printError(TerminalStyle.stderr.paint("warning: ", .yellow, .bold) + warning.message)
        }
    }
}
