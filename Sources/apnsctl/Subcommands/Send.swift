import ArgumentParser
import CredentialFormats
import Foundation
import PushChecks
import PushGateway

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a notification and explain APNs' answer, or send one to every token of a file.",
        discussion: """
            One device: --token TOKEN. Many: --tokens FILE (or - for standard input), one token per \
            line, # comments and blank lines skipped; see "Bulk sending" below. Every device subscribed \
            to a broadcast channel: --channel ID (see `apnsctl channels`).

            The device token may be pasted in any form: plain hex, upper case, with spaces, or as old iOS \
            code printed it (<740f4707 bebcf74f ...>). The payload is --alert (with --title, --sound, \
            --badge), --background, or a JSON file (--payload FILE, or - for standard input); its size is \
            checked before sending (4096 bytes, 5120 for voip).

            Push types: alert, background, voip, complication, fileprovider, location, liveactivity, \
            pushtotalk, widgets, controls, mdm. The topic is the credential's bundle ID with the suffix \
            the type needs (.voip, .complication, .pushkit.fileprovider, .location-query, \
            .push-type.liveactivity, .voip-ptt, .push-type.widgets, .push-type.controls); --topic \
            replaces it (an mdm push needs --topic with the push magic topic).

            Live Activities: --event start|update|end builds the payload (--content-state, and for a \
            push-to-start --attributes-type, --attributes and --alert), with the timestamp of now; \
            any liveactivity payload is checked against ActivityKit's rules before it is sent.

            --expiration takes a duration from now (30m, 1h, 2d), an RFC 3339 date, UNIX seconds, or \
            0 (try once, store nothing); a time already past is refused.

            A rejection is printed with its likely fix; the classic one, 400 BadDeviceToken, usually means \
            a token from a development build sent to production or the reverse.

            Bulk sending (--tokens): one HTTP/2 connection (--connections N for more), as many \
            notifications in flight as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows, following \
            changes to it. Every line gets exactly one result, as a JSON line in --results FILE (or on \
            standard output with --json): line, token, status, reason, apns_id, attempts, and \
            "uncertain": true with "uncertain_because" when an answer was lost (a timeout, a reset, a \
            lost connection). 429, 500 and 503 are retried with back-off and the same apns-id, up to \
            --max-attempts; notifications APNs answered are never sent again. An alert carries a \
            collapse ID derived from its apns-id, so a notification sent again after a lost answer \
            replaces the first on the device instead of showing twice: it is sent again, in the run \
            and by a resume; push types that act twice when delivered twice (voip, pushtotalk, \
            location, background) are not, unless --resend-uncertain (--no-resend-uncertain: at most \
            once for every type). When answers are lost or late the streams in flight are halved and \
            grown back as answers return, a --timeout that answers miss doubles (up to 8 times) before \
            anything is sent again, and two connections in a row closed before answering anything \
            stop the run. A journal \
            (FILE.journal) records what is in flight, so a run stopped by Ctrl-C, a crash or a reboot \
            continues with --resume FILE. Ctrl-C stops taking tokens, waits for those in flight and \
            writes their results; a second Ctrl-C stops waiting.

            Exit status: 0 accepted (bulk: every line accepted); 1 APNs rejected the notification or \
            broadcast, or the server refused the client certificate (bulk: a line rejected, failed \
            or malformed, or a results file that exists, refused with nothing sent); 2 could not send: a credential unreadable or not there, a device token or \
            payload APNs would refuse, a DNS, TLS or proxy failure (bulk: the run could not start or \
            stopped early, a credential APNs refuses or the gateway unreachable included, or \
            results that cannot be written); 64 usage error, also a time already \
            past, a Live Activity payload or channel ID that cannot be sent, or a resume of another \
            run's results; 130 a bulk run interrupted (Ctrl-C or SIGTERM) with every result written.

            Examples, against a local gateway on port 2197 (apnsctl gateway serve); \
            without --gateway and --ca they go to APNs itself. The .p12 password is in the \
            environment variable P12_PASSWORD.
              apnsctl send com.example.app-universal --alert Hello \\
                --token 740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
              apnsctl send app.p12 --password-env P12_PASSWORD --background \\
                --token 740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
              apnsctl send com.example.app-universal --tokens tokens.txt \\
                --results sent.jsonl --alert "New release" \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
            """
    )

    @Argument(
        help: ArgumentHelp("A stored alias, or a .p12/.pem/.p8 file.", valueName: "CREDENTIAL"),
        completion: .storedAliasOrFile
    )
    var credential: String

    @Option(help: ArgumentHelp("The device token.", valueName: "TOKEN"))
    var token: String?

    @Option(
        help: ArgumentHelp(
            "Broadcast to every device subscribed to this channel (a Live Activity payload).",
            valueName: "ID"
        )
    )
    var channel: String?

    @Option(
        help: ArgumentHelp(
            "Send to every token in this file (one per line), or - for standard input.",
            valueName: "FILE|-"
        ),
        completion: .file()
    )
    var tokens: String?

    @Option(
        help: ArgumentHelp("With --tokens: write one JSON line per token here (a new file).", valueName: "FILE"),
        completion: .file()
    )
    var results: String?

    @Option(
        help: ArgumentHelp(
            "With --tokens: continue the run whose results are in FILE, skipping tokens it finished; new results are appended to it unless --results names another file.",
            valueName: "FILE"
        ),
        completion: .file()
    )
    var resume: String?

    @Flag(
        help:
            "With --tokens: send again, with the same apns-id and collapse ID, a notification whose answer was lost (a timeout, a reset, a lost connection, a run killed with it in flight), whatever its push type. Default: resend unless a second delivery acts twice (voip, pushtotalk, location, background); a resume keeps the run's choice."
    )
    var resendUncertain = false

    @Flag(
        help:
            "With --tokens: at most once: never send again a notification whose answer was lost; its line says uncertain and why. Recorded for the run's resume."
    )
    var noResendUncertain = false

    /// The run's policy for lost answers as given: nil leaves it to the push type, or to the
    /// run a resume continues.
    var resendPolicy: Bool? { resendUncertain ? true : noResendUncertain ? false : nil }

    @Flag(
        help:
            "With --resume: continue a run whose journal is missing, knowing that what it had in flight is sent again (those devices may get the notification twice)."
    )
    var resumeWithoutJournal = false

    @Option(
        help: ArgumentHelp(
            "With --tokens: send only shard K of N of the list (K from 0): the tokens whose hash falls in it, the same whatever the file's order. auto/N takes K from JOB_COMPLETION_INDEX (Kubernetes), AWS_BATCH_JOB_ARRAY_INDEX or SLURM_ARRAY_TASK_ID.",
            valueName: "K/N|auto/N"
        )
    )
    var shard: String?

    @Flag(help: "With --tokens: send to every line, a token listed twice too (default: each token once).")
    var allowDuplicates = false

    @Option(help: ArgumentHelp("With --tokens: HTTP/2 connections to use (1 to 16).", valueName: "N"))
    var connections: Int = 1

    @Option(
        help: ArgumentHelp("With --tokens: sends per notification at most, retries included (1 to 20).", valueName: "N")
    )
    var maxAttempts: Int = 5

    @Flag(help: "With --tokens: no progress bar and no summary.")
    var quiet = false

    @Option(help: ArgumentHelp("Alert text (the body).", valueName: "TEXT"))
    var alert: String?

    @Option(help: ArgumentHelp("Alert title, with --alert.", valueName: "TEXT"))
    var title: String?

    @Option(help: ArgumentHelp("Sound name, with --alert (e.g. default).", valueName: "NAME"))
    var sound: String?

    @Option(help: ArgumentHelp("Badge number, with --alert.", valueName: "N"))
    var badge: Int?

    @Flag(help: "A background (content-available) push: priority 5, push type background.")
    var background = false

    @Option(
        help: ArgumentHelp("The JSON payload from a file, or - for standard input.", valueName: "FILE|-"),
        completion: .file(extensions: ["json"])
    )
    var payload: String?

    @Option(
        help: ArgumentHelp(
            "apns-push-type (alert, background, voip, complication, fileprovider, location, liveactivity, pushtotalk, widgets, controls, mdm).",
            valueName: "TYPE"
        ),
        completion: .list(PushType.known.map(\.description))
    )
    var pushType: String?

    @Option(help: ArgumentHelp("apns-priority: 10, 5 or 1.", valueName: "10|5|1"), completion: .list(["10", "5", "1"]))
    var priority: Int?

    @Option(
        help: ArgumentHelp(
            "apns-expiration: 30m, 1h, 2d from now, an RFC 3339 date, UNIX seconds, or 0 (deliver now or never).",
            valueName: "TIME"
        )
    )
    var expiration: String?

    @Option(help: ArgumentHelp("apns-collapse-id (at most 64 bytes).", valueName: "ID"))
    var collapseID: String?

    @Option(help: ArgumentHelp("apns-id (a UUID; APNs makes one when absent).", valueName: "UUID"))
    var apnsID: String?

    @Option(help: ArgumentHelp("apns-topic (default: the credential's bundle ID).", valueName: "BUNDLE"))
    var topic: String?

    @Flag(help: "Print a versioned JSON report.")
    var json = false

    @Option(help: ConnectionOptions.optionalEnvironmentHelp)
    var environment: PushEnvironment?

    @OptionGroup(title: "Live Activities") var liveActivity: LiveActivityOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var credentials: CredentialOptions

    static let tokenKeyNeedsTopic = ValidationError("A token key (.p8) names no app: give --topic BUNDLE.")

    func validate() throws {
        if let topic { try TopicPlaceholder.refuse(topic) }
        if TokenKeyFile.isTokenKeyPath(credential), topic == nil, channel == nil { throw Self.tokenKeyNeedsTopic }
        if [token, tokens, channel].compactMap({ $0 }).count != 1 {
            throw ValidationError(
                "Give --token TOKEN for one device, --tokens FILE for many, or --channel ID for a broadcast."
            )
        }
        if tokens == nil,
            results != nil || resume != nil || resendUncertain || noResendUncertain || resumeWithoutJournal || quiet
                || allowDuplicates || shard != nil
        {
            throw ValidationError(
                "--results, --resume, --resend-uncertain (or --no-resend-uncertain), --resume-without-journal, --allow-duplicates, --shard and --quiet go with --tokens."
            )
        }
        if tokens != nil {
            if apnsID != nil {
                throw ValidationError("--apns-id is for one notification; with --tokens each gets its own.")
            }
            if !(1...16).contains(connections) { throw ValidationError("--connections must be between 1 and 16.") }
            if !(1...20).contains(maxAttempts) { throw ValidationError("--max-attempts must be between 1 and 20.") }
            if results == nil, resume == nil, !json {
                throw ValidationError("Give --results FILE (or --json to write the results to standard output).")
            }
            if resendUncertain && noResendUncertain {
                throw ValidationError("Give --resend-uncertain or --no-resend-uncertain, not both.")
            }
            if let shard { _ = try ShardOption.resolve(shard) }
            if resumeWithoutJournal, resume == nil {
                throw ValidationError("--resume-without-journal goes with --resume.")
            }
            if tokens == "-", payload == "-" {
                throw ValidationError("--tokens - and --payload - cannot both read standard input.")
            }
            if tokens == "-", credentials.password.passwordStdin {
                throw ValidationError("--tokens - and --password-stdin cannot both read standard input.")
            }
        }
        try validatePayloadSources()
        if let priority, ![1, 5, 10].contains(priority) { throw ValidationError("--priority is 10, 5 or 1.") }
        if let expiration { _ = try usage { try PushTime.expiration(expiration, now: Date()) } }
        if let apnsID, UUID(uuidString: apnsID) == nil {
            throw ValidationError("--apns-id must be a UUID such as 123e4567-e89b-12d3-a456-426614174000.")
        }
        if let pushType, !PushType.known.map(\.rawValue).contains(pushType) {
            throw ValidationError(
                "--push-type \(pushType) is not one APNs knows: \(PushType.known.map(\.rawValue).joined(separator: ", "))."
            )
        }
        if payload == "-", credentials.password.passwordStdin {
            throw ValidationError("--payload - and --password-stdin cannot both read standard input.")
        }
        try validateLiveActivityAndChannel()
    }

    /// What both forms need: the library's plan (credential, gateway, topic) and the
    /// notification (for `--token`; a template for `--tokens`).
    struct Prepared {
        var plan: GatewayPlan
        var notification: PushNotification
    }

    func prepare(token deviceToken: DeviceToken, quietNotes: Bool) async throws -> Prepared {
        let request = try makeRequest()
        let type = request.resolvedPushType
        // The payload's own checks come before the credential is read, as a usage mistake should.
        let body = try request.payload()
        let (plan, notes) = try connection.plan(
            for: try await credentials.load(credential),
            requested: environment,
            topic: topic,
            pushType: type
        )
        let notification = try request.notification(to: deviceToken, topic: plan.topic, payload: body)
        if !quietNotes {
            let style = TerminalStyle.stderr
            for line in notes { printError(style.paint("note: ", .bold) + line) }
            for warning in plan.warnings { printError(style.paint("warning: ", .yellow, .bold) + warning.message) }
        }
        return Prepared(plan: plan, notification: notification)
    }

    func run() async throws {
        if let tokens {
            try await runBulk(tokensPath: tokens)
            return
        }
        if let channel {
            try await runBroadcast(channel: channel)
            return
        }
        let style = TerminalStyle.stdout
        let result: SendOutput = try await withUserErrors {
            let deviceToken = try DeviceToken(token ?? "")
            let prepared = try await prepare(token: deviceToken, quietNotes: json)
            let plan = prepared.plan
            let response = try await plan.send(prepared.notification)
            return SendOutput(
                credential: plan.credential.name,
                environment: plan.environment,
                gateway: plan.configuration.endpoint.description,
                topic: plan.topic,
                pushType: prepared.notification.pushType.rawValue,
                token: deviceToken.hex,
                payloadBytes: prepared.notification.payload.count,
                response: response,
                explanation: response.reason?.explanation,
                fix: response.reason?.fix
            )
        }
        if json {
            try printJSON(result)
        } else {
            print(render(result, style: style))
        }
        if !result.response.isAccepted { throw ExitStatus.problem }
    }

    private func render(_ result: SendOutput, style: TerminalStyle) -> String {
        let response = result.response
        var lines: [String] = []
        let latency = HandshakeRenderer.milliseconds(response.latency)
        if response.isAccepted {
            lines.append(
                style.paint("✓ \(response.status) accepted", .green, .bold)
                    + "  by \(result.gateway) (\(result.environmentLabel)) in \(latency)"
            )
        } else {
            let reason = Untrusted.display(response.reason?.rawValue ?? "no reason given")  // the server's words
            lines.append(
                style.paint("✗ \(response.status) \(reason)", .red, .bold)
                    + "  from \(result.gateway) (\(result.environmentLabel)) in \(latency)"
            )
        }
        var rows: [(String, String)] = [
            ("topic", Untrusted.display(result.topic ?? "(none)")), ("push type", result.pushType),
            ("token", result.token),
            ("payload", "\(result.payloadBytes) bytes"),
        ]
        if let id = response.apnsID { rows.append(("apns-id", id.uuidString.lowercased())) }
        if let unique = response.apnsUniqueID { rows.append(("apns-unique-id", Untrusted.display(unique))) }
        if let timestamp = response.timestamp {
            rows.append(("unregistered", CertificateRenderer.timestamp(timestamp)))
        }
        if let retry = response.retryAfter { rows.append(("retry-after", "\(retry) s")) }
        lines += rows.map { style.row($0, $1, width: 14) }
        if let explanation = result.explanation { lines.append("  " + explanation) }
        if let fix = result.fix { lines.append("  " + style.paint("→ \(fix)", .bold)) }
        return lines.joined(separator: "\n")
    }
}

struct SendOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var credential: String
    var environment: PushEnvironment
    var gateway: String
    var topic: String?
    var pushType: String
    var token: String
    var payloadBytes: Int
    var response: PushResponse
    var explanation: String?
    var fix: String?
}
