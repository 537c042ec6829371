import ArgumentParser
import PushMonitoring

extension X509Exposition.Names: ExpressibleByArgument {}

/// x509-certificate-exporter's names and optional series, for `check --format prometheus` and
/// the exporter; the options are named after that exporter's own.
struct X509MetricsOptions: ParsableArguments {
    @Option(
        name: .customLong("x509-names"),
        help: ArgumentHelp(
            "x509-certificate-exporter's names: v4 (x509_source_up, x509_source_errors_total...) or v3 (x509_read_errors).",
            valueName: "v4|v3"
        )
    )
    var names: X509Exposition.Names = .v4

    @Flag(help: "Also give x509_cert_not_before (version 3's names always do).")
    var exposeNotBefore = false

    @Flag(help: "Also give x509_cert_expires_in_seconds and x509_cert_valid_since_seconds.")
    var exposeRelativeMetrics = false

    @Flag(help: "Also give x509_cert_error: 1 for a stored certificate that could not be read.")
    var exposePerCertErrorMetrics = false

    var exposition: X509Exposition {
        X509Exposition(
            names: names,
            notBefore: exposeNotBefore,
            relative: exposeRelativeMetrics,
            perCertificateError: exposePerCertErrorMetrics
        )
    }
}
