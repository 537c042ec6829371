import ArgumentParser
import Foundation
import LocalGateway
import PushStore

#if canImport(Glibc)
import Glibc
#endif

extension Gateway {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Run the local gateway until interrupted.",
            discussion: """
                Answers as APNs does: it checks client certificates against --client-ca and enforces their \
                environments and topics, verifies provider tokens against --token-key, validates headers, \
                device tokens, payloads and push types with APNs' reasons, and records every accepted \
                notification as a JSON line in --log. It speaks HTTP/2 with ALPN h2 and without ALPN.

                Without --cert/--key it makes a fresh server CA at start; write it with --ca-out and give \
                that file to clients (`apnsctl send --ca FILE`, `curl --cacert FILE`).

                Bounds, so that no client can take the gateway's memory or descriptors: at most \
                --max-connections connections (default 1000; at the cap the connection idle the longest \
                makes room for the new one), --handshake-timeout (10 s), --first-request-timeout (60 s) \
                and --idle-timeout (300 s); per connection, 8 KiB of request headers, 1 MiB of unfinished \
                requests, 1000 PING/SETTINGS frames and 1000 early stream resets per 10 s, and 30 s for \
                answers that do not drain. On exit it says how many connections it shed or refused.

                Exit status: 0 stopped by Ctrl-C or SIGTERM; 1 refused, nothing served: the --ca-out \
                file exists (--force replaces it); 2 could not start (the address or port taken, a \
                file given that cannot be read or written); 64 usage error.

                Examples. The first makes a client CA in gw and an identity from it; the second serves until Ctrl-C. \
                The .p12 password is in the environment variable P12_PASSWORD.
                  apnsctl gateway mint-identity --topic com.example.app --environment both \\
                    --ca-dir gw --out app.p12 --password-env P12_PASSWORD
                  apnsctl gateway serve --client-ca gw/client-ca.pem \\
                    --ca-out gw/server-ca.pem --port 2197
                """
        )

        @Option(help: ArgumentHelp("The environment this gateway plays.", valueName: "sandbox|production"))
        var environment: PushEnvironment = .sandbox

        @Option(help: ArgumentHelp("The address to listen on (loopback by default).", valueName: "ADDRESS"))
        var host = "127.0.0.1"

        @Option(help: ArgumentHelp("The port (0 chooses a free one; it is printed).", valueName: "PORT"))
        var port = 0

        @Option(
            help: ArgumentHelp("Write the port here once listening (for scripts).", valueName: "FILE"),
            completion: .file()
        )
        var portFile: String?

        @Option(
            help: ArgumentHelp("Server certificate (PEM); default: generated at start.", valueName: "FILE"),
            completion: .pemFile
        )
        var cert: String?

        @Option(help: ArgumentHelp("Server private key (PEM), with --cert.", valueName: "FILE"), completion: .pemFile)
        var key: String?

        @Option(
            help: ArgumentHelp("Write the generated server CA here, for clients to trust.", valueName: "FILE"),
            completion: .file()
        )
        var caOut: String?

        @Option(
            help: ArgumentHelp("Trust client certificates issued by this CA (PEM). Repeatable.", valueName: "FILE"),
            completion: .pemFile
        )
        var clientCA: [String] = []

        @Option(
            name: .customLong("token-key"),
            help: ArgumentHelp(
                "Accept provider tokens signed by this key: KEYID=PUBLIC-KEY.pem. Repeatable.",
                valueName: "KEYID=FILE"
            )
        )
        var tokenKeys: [String] = []

        @Option(
            name: .customLong("key-environment"),
            help: ArgumentHelp(
                "Restrict a --token-key to one environment, as Apple's environment-scoped keys are (else: 403 BadEnvironmentKeyInToken). A key ID without --token-key is one the gateway knows only for the other environment (403 BadEnvironmentKeyIdInToken). Repeatable.",
                valueName: "KEYID=sandbox|production"
            )
        )
        var keyEnvironments: [String] = []

        @Option(
            name: .customLong("key-topic"),
            help: ArgumentHelp(
                "Restrict a --token-key to this app (and its .voip, .complication... topics), as Apple's topic-specific keys are (else: 403 UnrelatedKeyIdInToken). Repeatable.",
                valueName: "KEYID=BUNDLE"
            )
        )
        var keyTopics: [String] = []

        @Flag(
            inversion: .prefixedNo,
            help: "Honour --key-environment and --key-topic (--no-key-scopes: every key serves everything)."
        )
        var keyScopes = true

        @Flag(
            inversion: .prefixedNo,
            help:
                "Advertise 1 concurrent stream after a rejected notification (4xx) until one is accepted, as APNs does."
        )
        var singleStreamAfterRejection = true

        @Flag(
            inversion: .prefixedNo,
            help:
                "Start connections without a client certificate at 1 stream until a request carries a valid provider token, as APNs does (with --token-key)."
        )
        var singleStreamUntilToken = true

        @Flag(
            name: .customLong("goaway-reasons"),
            inversion: .prefixedNo,
            help:
                "Put APNs' JSON reason in GOAWAY ({\"reason\":\"Shutdown\"}, IdleTimeout); --no-goaway-reasons sends none."
        )
        var goAwayReasons = true

        @Option(help: ArgumentHelp("The team ID of the --token-key keys.", valueName: "TEAMID"))
        var teamID: String?

        @Option(
            help: ArgumentHelp(
                "Device-token registry (JSON: token → topic, environment, unregistered_at).",
                valueName: "FILE"
            ),
            completion: .file(extensions: ["json"])
        )
        var devices: String?

        @Option(
            help: ArgumentHelp("Record every accepted notification here, one JSON line each.", valueName: "FILE"),
            completion: .file()
        )
        var log: String?

        @Option(
            name: .customLong("latency-ms"),
            help: ArgumentHelp("Fault: added latency per request, in milliseconds.", valueName: "MILLISECONDS")
        )
        var latencyMilliseconds: Double = 0

        @Option(
            name: .customLong("rate-429"),
            help: ArgumentHelp("Fault: fraction of requests answered 429 TooManyRequests.", valueName: "FRACTION")
        )
        var rate429: Double = 0

        @Option(
            name: .customLong("rate-500"),
            help: ArgumentHelp("Fault: fraction answered 500 InternalServerError.", valueName: "FRACTION")
        )
        var rate500: Double = 0

        @Option(
            name: .customLong("rate-503"),
            help: ArgumentHelp("Fault: fraction answered 503 ServiceUnavailable.", valueName: "FRACTION")
        )
        var rate503: Double = 0

        @Option(help: ArgumentHelp("Seed for the fault fractions, so runs repeat.", valueName: "N"))
        var seed: UInt64 = 1

        @Option(
            name: .customLong("goaway-after"),
            help: ArgumentHelp("Fault: send GOAWAY after this many streams on a connection.", valueName: "N")
        )
        var goAwayAfter: Int?

        @Option(
            help: ArgumentHelp(
                "Fault: close the connection abruptly when the stream after this many arrives (0: the first, unanswered).",
                valueName: "N"
            )
        )
        var closeAfter: Int?

        @Option(
            name: .customLong("stats"),
            help: ArgumentHelp(
                "On exit, write what the gateway counted (streams, accepted, rejected by reason, most concurrent streams, refused streams, GOAWAYs), per device the notifications delivered and shown, and the streams in flight over time here as JSON.",
                valueName: "FILE"
            ),
            completion: .file()
        )
        var statsFile: String?

        @Option(
            help: ArgumentHelp(
                "On exit, write per device the notifications a person would see (apns-id, collapse id, push type; the same collapse id shown once) here, one JSON line per device.",
                valueName: "FILE"
            ),
            completion: .file()
        )
        var shown: String?

        @Flag(help: "Let --ca-out overwrite an existing file.")
        var force = false

        @Option(
            help: ArgumentHelp(
                "Close a connection that sends nothing for this long, with GOAWAY {\"reason\":\"IdleTimeout\"} (0: never).",
                valueName: "SECONDS"
            )
        )
        var idleTimeout: Double = 300

        @Option(
            help: ArgumentHelp("Close a connection whose TLS handshake takes longer than this.", valueName: "SECONDS")
        )
        var handshakeTimeout: Double = 10

        @Option(
            help: ArgumentHelp(
                "Close a connection that has sent no request this long after its TLS handshake (PINGs do not count), with GOAWAY {\"reason\":\"IdleTimeout\"} (0: never).",
                valueName: "SECONDS"
            )
        )
        var firstRequestTimeout: Double = 60

        @Option(
            help: ArgumentHelp(
                "Hold at most this many connections. A connection arriving at the cap takes the place of the one idle the longest (GOAWAY IdleTimeout); when none is idle, it is closed. Lowered to what the descriptor limit allows.",
                valueName: "N"
            )
        )
        var maxConnections = LocalGateway.Configuration.defaultMaxConnections

        @Option(
            help: ArgumentHelp(
                "Fault, once: accept and record notification number N, then cut its connection before answering (an answer lost in flight).",
                valueName: "N"
            )
        )
        var dropAfter: Int?

        @Option(help: ArgumentHelp("SETTINGS_MAX_CONCURRENT_STREAMS to advertise.", valueName: "N"))
        var maxConcurrentStreams = 1000

        @Option(
            help: ArgumentHelp(
                "Fault: after K accepted notifications on a connection, advertise N streams (as APNs does after a rejection or an accepted token).",
                valueName: "K:N"
            )
        )
        var changeStreams: String?

        @Flag(help: "Answer before reading the body and reset the stream with NO_ERROR, as nginx does.")
        var earlyAnswer = false

        func run() async throws {
            try await withUserErrors {
                let statistics = try await LocalGateway.serve(
                    try gatewayConfiguration(),
                    files: try serveFiles(),
                    until: { Self.watchTermination() },
                    onListening: { bound in
                        let style = TerminalStyle.stderr
                        printError(
                            "\(style.paint("apnsctl gateway", .bold)): \(environment) gateway listening on \(host):\(bound)"
                                + (caOut.map { "; server CA in \($0)" } ?? "")
                                + (log.map { "; recording to \($0)" } ?? "")
                                + ". Ctrl-C stops it."
                        )
                    }
                )
                printError(
                    "apnsctl gateway: stopped after \(statistics.streams) requests (\(statistics.accepted) accepted, \(statistics.rejectedTotal) rejected) on \(statistics.connections) connections"
                        + Self.boundsSummary(statistics) + "."
                )
            }
        }
    }
}
