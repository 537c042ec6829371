import ArgumentParser
import Foundation
import PushGateway
import PushMonitoring
import PushStore

struct Exporter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exporter",
        abstract: "Serve a store's check and APNs probes over HTTP for Prometheus.",
        discussion: """
            A long-running HTTP endpoint, on loopback unless --listen says otherwise:

            /metrics: the series of check --format prometheus for every stored credential \
            (x509_cert_not_after..., apnsctl_credential_problem, apnsctl_app_ready...), in \
            x509-certificate-exporter v4's names (x509_source_up, x509_source_bundles, \
            x509_source_errors_total{reason}; --x509-names v3 for x509_read_errors). The store is \
            read at most once per --store-refresh (60 s): scrapes and probes in between are \
            served from that read. A read that fails keeps the last good one's series, with \
            x509_source_up 0 and apnsctl_check_success 0.

            /healthz answers 200 while the process runs; /readyz 200 once the store was read, \
            503 before. Both are behind --web.config.file, as x509-certificate-exporter serves \
            them on its main port.

            /probe?credential=ALIAS&environment=sandbox|production (optionally &topic=TOPIC, one \
            of the credential's topics or its bundle ID with a push type's suffix such as .voip): a \
            handshake and an auth check against that environment's gateway (or --gateway), \
            answered in blackbox_exporter's names (probe_success, probe_duration_seconds, \
            probe_http_duration_seconds{phase}, probe_ssl_earliest_cert_expiry, \
            probe_tls_version_info) plus apnsctl_probe_auth_status with APNs' reason. One \
            credential and environment is connected at most once per --min-probe-interval, \
            whatever the topic, because APNs treats rapid reconnects as abuse; a scrape in \
            between gets the last result (apnsctl_probe_cached 1). An unknown credential, \
            parameter or topic gets a 400. At most 1024 results are kept, none for a credential \
            no longer in the store. A probe is logged when its verdict changes.

            /: a status page for a person with a browser (plain HTML, no script): the store and \
            whether it was read, each app's verdict per environment with the days left, the \
            credentials and their findings, the last 20 probes with their phases and answers, and \
            a form for a probe. It shows what /metrics and /probe show, no secret nor device token.

            Bounds: a request must arrive whole within --request-timeout (10 s); a connection \
            with no request under way is closed after --idle-timeout (60 s); at most \
            --max-connections (256) are held, a new one closing the oldest not being answered \
            (lowered, with a warning at start, to what the open-file limit allows). \
            The Host header is not read.

            --web.config.file takes exporter-toolkit's YAML, as node_exporter and \
            blackbox_exporter do: tls_server_config (cert_file, key_file, client_ca_file, \
            client_auth_type NoClientCert, VerifyClientCertIfGiven or \
            RequireAndVerifyClientCert, min_version, max_version) and basic_auth_users (user: \
            bcrypt hash, as htpasswd -nB USER makes it). A listen address other than loopback \
            without it gets a warning.

            It stops on SIGTERM or Ctrl-C; a failed probe never stops it. Secrets come from the \
            Secret Service and appear in no URL, label or log line.

            Then, for instance, curl http://127.0.0.1:9797/metrics, or curl \
            '127.0.0.1:9797/probe?credential=ALIAS&environment=sandbox'.

            Exit status: 0 stopped by SIGTERM or Ctrl-C (what the store holds and what probes find \
            is in the metrics, never in the status); 2 could not start: --web.config.file \
            unreadable or not valid, or the --listen address cannot be listened on; 64 usage error.

            Examples, with a local gateway on port 2197 (apnsctl gateway serve):
              apnsctl exporter --listen 127.0.0.1:9797 --skip-secrets
              apnsctl exporter --listen 127.0.0.1:9797 \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
            """
    )

    @Option(help: ArgumentHelp("Where to listen: an address and port on this host.", valueName: "ADDR:PORT"))
    var listen = "127.0.0.1:9797"

    @Option(
        help: ArgumentHelp(
            "Seconds a read of the store is kept: /metrics and /probe are served from it until the next.",
            valueName: "SECONDS"
        )
    )
    var storeRefresh: Double?

    /// The name of earlier versions, kept so that units written for them still start.
    @Option(help: .hidden)
    var checkInterval: Double?

    @OptionGroup(title: "Prometheus") var x509: X509MetricsOptions

    @Option(
        help: ArgumentHelp(
            "Seconds between two connections for one probe target; scrapes in between get the last result.",
            valueName: "SECONDS"
        )
    )
    var minProbeInterval: Double = 60

    @Option(
        help: ArgumentHelp(
            "Seconds a request (with its TLS handshake) may take to arrive whole before the connection is closed.",
            valueName: "SECONDS"
        )
    )
    var requestTimeout: Double = ExporterLimits.defaultRequestTimeout

    @Option(help: ArgumentHelp("Seconds a connection may stay open with no request under way.", valueName: "SECONDS"))
    var idleTimeout: Double = ExporterLimits.defaultIdleTimeout

    @Option(
        help: ArgumentHelp(
            "Connections held at once; a new one at the cap closes the oldest one not being answered. Lowered to what the open-file limit allows.",
            valueName: "N"
        )
    )
    var maxConnections = ExporterLimits.defaultMaxConnections

    @Option(
        name: .customLong("web.config.file"),
        help: ArgumentHelp(
            "TLS and basic authentication, in exporter-toolkit's YAML (tls_server_config, basic_auth_users).",
            valueName: "FILE"
        )
    )
    var webConfigFile: String?

    @Option(help: ArgumentHelp("Count a certificate expiring within this many days as a warning.", valueName: "N"))
    var warnDays = 30

    @Flag(help: "Check only what the store's files say for /metrics (probes still need the Secret Service).")
    var skipSecrets = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard Self.listenAddress(listen) != nil else {
            throw ValidationError("--listen takes ADDR:PORT, such as 127.0.0.1:9797 or [::1]:9797, not \"\(listen)\".")
        }
        if storeRefresh != nil, checkInterval != nil {
            throw ValidationError("--check-interval is the old name of --store-refresh: give one of them.")
        }
        for (name, value) in [("--store-refresh", refresh), ("--min-probe-interval", minProbeInterval)]
        where !value.isFinite || value < 0 {
            throw ValidationError("\(name) must be 0 or more seconds.")
        }
        for (name, value) in [("--request-timeout", requestTimeout), ("--idle-timeout", idleTimeout)]
        where !value.isFinite || value <= 0 || value > 86400 {
            throw ValidationError("\(name) must be more than 0 and at most 86400 seconds.")
        }
        if maxConnections < 1 || maxConnections > 100_000 {
            throw ValidationError("--max-connections must be from 1 to 100000.")
        }
        if warnDays < 0 { throw ValidationError("--warn-days must be 0 or more.") }
        if connection.port != nil {
            throw ValidationError("--port does not apply to the exporter: give --gateway HOST:PORT.")
        }
    }

    /// The store's refresh interval, by either name.
    var refresh: Double { storeRefresh ?? checkInterval ?? 60 }

    static func listenAddress(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        return (host, port)
    }

    func run() async throws {
        let (host, port) = Self.listenAddress(listen)!
        var webConfig: WebConfig?
        if let webConfigFile {
            do {
                webConfig = try WebConfig(contentsOf: webConfigFile)
            } catch {
                reportError(error)
                throw ExitStatus.couldNotCheck
            }
        }
        let served = try await store.credentialStore
        let configuration = MetricsExporter.Configuration(
            host: host,
            port: port,
            check: StoreCheck(store: served, warnDays: warnDays, skipSecrets: skipSecrets),
            storeRefresh: refresh,
            x509: x509.exposition,
            probe: ProbeSettings(
                connection: connection.settings(environment: nil),
                minimumInterval: minProbeInterval
            ),
            limits: ExporterLimits(
                requestTimeout: requestTimeout,
                idleTimeout: idleTimeout,
                maxConnections: maxConnections
            ),
            webConfig: webConfig
        )
        if let warning = configuration.exposureWarning {
            printError(
                "apnsctl exporter: warning: \(warning) Give --web.config.file with tls_server_config and basic_auth_users, or listen on 127.0.0.1."
            )
        }
        let exporter = MetricsExporter(
            configuration: configuration,
            log: { line in printError("apnsctl exporter: " + line) }
        )
        if let note = exporter.connectionCapNote {
            printError("apnsctl exporter: warning: \(note)")
        }
        let scheme = webConfig?.tls == nil ? "http" : "https"
        let terminated = Gateway.Serve.watchTermination()
        terminated.whenComplete { _ in exporter.stop() }
        do {
            try await exporter.run { bound in
                printError(
                    "apnsctl exporter: serving \(served.path) on \(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(bound)/metrics, /probe, /healthz, /readyz and a status page at /. Ctrl-C stops it."
                )
            }
        } catch {
            reportError(
                CommandLineError(
                    .cannotListen,
                    "the exporter cannot listen on \(listen) (\(error)).",
                    hint: "Give another --listen address, or stop what uses the port."
                )
            )
            throw ExitStatus.couldNotCheck
        }
        printError("apnsctl exporter: stopped.")
    }
}
