import ArgumentParser
import Foundation
import PushCredentials
import PushGateway
import PushMonitoring

struct Exporter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exporter",
        abstract: "Serve a store's check and APNs probes over HTTP for Prometheus.",
        discussion: """
            A long-running HTTP endpoint, on loopback unless --listen says otherwise:

            /metrics: the series of check --format prometheus for every stored credential \
            (x509_cert_not_after..., apnsctl_credential_problem, apnsctl_app_ready...), computed \
            again at most once per --check-interval.

            /probe?credential=ALIAS&environment=sandbox|production (optionally &topic=BUNDLE): a \
            handshake and an auth check against that environment's gateway (or --gateway), \
            answered in blackbox_exporter's names (probe_success, probe_duration_seconds, \
            probe_http_duration_seconds{phase}, probe_ssl_earliest_cert_expiry, \
            probe_tls_version_info) plus apnsctl_probe_auth_status with APNs' reason. One \
            credential, environment and topic is connected at most once per --min-probe-interval, \
            because APNs treats rapid reconnects as abuse; a scrape in between gets the last \
            result (apnsctl_probe_cached 1). An unknown credential or parameter gets a 400.

            It stops on SIGTERM or Ctrl-C; a failed probe never stops it. Secrets come from the \
            Secret Service and appear in no URL, label or log line.

            Then, for instance, curl http://127.0.0.1:9797/metrics, or curl \
            '127.0.0.1:9797/probe?credential=ALIAS&environment=sandbox'.

            Examples, with a local gateway on port 2197 (apnsctl gateway serve):
              apnsctl exporter --listen 127.0.0.1:9797 --skip-secrets
              apnsctl exporter --listen 127.0.0.1:9797 \\
                --gateway 127.0.0.1:2197 --ca gw/server-ca.pem
            """
    )

    @Option(help: ArgumentHelp("Where to listen: an address and port on this host.", valueName: "ADDR:PORT"))
    var listen = "127.0.0.1:9797"

    @Option(
        name: .customLong("check-interval"),
        help: ArgumentHelp("Seconds between two checks of the store for /metrics.", valueName: "SECONDS")
    )
    var checkInterval: Double = 300

    @Option(
        name: .customLong("min-probe-interval"),
        help: ArgumentHelp(
            "Seconds between two connections for one probe target; scrapes in between get the last result.",
            valueName: "SECONDS"
        )
    )
    var minProbeInterval: Double = 60

    @Option(
        name: .customLong("warn-days"),
        help: ArgumentHelp("Count a certificate expiring within this many days as a warning.", valueName: "N")
    )
    var warnDays = 30

    @Flag(
        name: .customLong("skip-secrets"),
        help: "Check only what the store's files say for /metrics (probes still need the Secret Service)."
    )
    var skipSecrets = false

    @OptionGroup var store: StoreOptions
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard Self.listenAddress(listen) != nil else {
            throw ValidationError("--listen takes ADDR:PORT, such as 127.0.0.1:9797 or [::1]:9797, not \"\(listen)\".")
        }
        if !checkInterval.isFinite || checkInterval < 0 {
            throw ValidationError("--check-interval must be 0 or more seconds.")
        }
        if !minProbeInterval.isFinite || minProbeInterval < 0 {
            throw ValidationError("--min-probe-interval must be 0 or more seconds.")
        }
        if warnDays < 0 { throw ValidationError("--warn-days must be 0 or more.") }
        if connection.port != nil {
            throw ValidationError("--port does not apply to the exporter: give --gateway HOST:PORT.")
        }
    }

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
        let exporter = MetricsExporter(
            configuration: .init(
                host: host,
                port: port,
                check: StoreCheck(store: store.credentialStore, warnDays: warnDays, skipSecrets: skipSecrets),
                checkInterval: checkInterval,
                probe: ProbeSettings(
                    connection: connection.settings(environment: nil),
                    minimumInterval: minProbeInterval
                )
            ),
            log: { line in printError("apnsctl exporter: " + line) }
        )
        let terminated = Gateway.Serve.watchTermination()
        terminated.whenComplete { _ in exporter.stop() }
        do {
            try await exporter.run { bound in
                printError(
                    "apnsctl exporter: serving \(store.credentialStore.path) on http://\(host.contains(":") ? "[\(host)]" : host):\(bound)/metrics and /probe. Ctrl-C stops it."
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
