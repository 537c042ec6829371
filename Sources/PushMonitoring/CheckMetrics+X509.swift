import Foundation
import PushChecks

/// x509-certificate-exporter's series, in the names of the version asked for.
extension CheckMetrics {
    static func renderX509(_ run: CheckRun, _ x509: X509Exposition, into out: inout MetricsText) {
        let certificates = run.results.compactMap(\.x509)
        out.family("x509_cert_not_after", "Indicates the certificate's not after timestamp")
        for names in certificates {
            out.sample("x509_cert_not_after", x509Labels(names), names.notAfter.timeIntervalSince1970.rounded(.down))
        }
        if x509.givesNotBefore {
            out.family("x509_cert_not_before", "Indicates the certificate's not before timestamp")
            for names in certificates {
                out.sample(
                    "x509_cert_not_before",
                    x509Labels(names),
                    names.notBefore.timeIntervalSince1970.rounded(.down)
                )
            }
        }
        out.family("x509_cert_expired", "Indicates if the certificate is expired")
        for names in certificates {
            out.sample("x509_cert_expired", x509Labels(names), run.date > names.notAfter ? 1 : 0)
        }
        if x509.relative {
            out.family(
                "x509_cert_expires_in_seconds",
                "Indicates the remaining time before the certificate's not after timestamp"
            )
            for names in certificates {
                out.sample(
                    "x509_cert_expires_in_seconds",
                    x509Labels(names),
                    seconds(names.notAfter.timeIntervalSince(run.date))
                )
            }
            out.family(
                "x509_cert_valid_since_seconds",
                "Indicates the elapsed time since the certificate's not before timestamp"
            )
            for names in certificates {
                out.sample(
                    "x509_cert_valid_since_seconds",
                    x509Labels(names),
                    seconds(run.date.timeIntervalSince(names.notBefore))
                )
            }
        }
        if x509.perCertificateError { renderCertificateErrors(run, into: &out) }
        if x509.names == .v3 {
            out.family("x509_read_errors", "Indicates the number of read failure(s)")
            out.sample("x509_read_errors", [:], Double(run.results.filter { $0.error != nil }.count))
        }
    }

    static func seconds(_ interval: TimeInterval) -> Double { interval.rounded(.down) }

    /// `x509_cert_error`: 0 for each certificate read, 1 for a stored certificate that could not be
    /// read, with its file and its other labels empty, as x509-certificate-exporter gives an item
    /// that failed to parse.
    static func renderCertificateErrors(_ run: CheckRun, into out: inout MetricsText) {
        out.family("x509_cert_error", "Indicates whether the certificate could not be read (1) or was read (0)")
        for names in run.results.compactMap(\.x509) {
            out.sample("x509_cert_error", x509Labels(names), 0)
        }
        for result in run.results where result.x509 == nil && result.kind != .tokenKey {
            guard X509Reason.of(result, secretsAsked: run.secretsAsked) != nil else { continue }
            let path = result.origin == "file" ? result.name : run.certificatePaths[result.name] ?? ""
            var labels: [(String, String)] = [("serial_number", "")]
            for part in X509Names.attributeNames { labels.append(("subject_\(part)", "")) }
            for part in X509Names.attributeNames { labels.append(("issuer_\(part)", "")) }
            labels.append(("filename", (path as NSString).lastPathComponent))
            labels.append(("filepath", path))
            out.sample("x509_cert_error", labels, 1)
        }
    }

    /// Version 4's per-source series: the store is the one source.
    static func renderSource(_ status: X509SourceStatus, into out: inout MetricsText) {
        let labels = status.source.labels
        out.family("x509_source_up", "1 if the source has produced its first sync, 0 otherwise.")
        out.sample("x509_source_up", labels, status.up ? 1 : 0)
        out.family("x509_source_bundles", "Number of bundles currently tracked per source.")
        out.sample("x509_source_bundles", labels, Double(status.bundles))
        out.family("x509_source_errors_total", "Errors emitted by sources, by reason code.", .counter)
        for reason in Set(X509Reason.all).union(status.errors.keys).sorted() {
            out.sample("x509_source_errors_total", labels + [("reason", reason)], Double(status.errors[reason] ?? 0))
        }
        out.family(
            "x509_pkcs12_passphrase_failures_total",
            "PKCS#12 decoding attempts failed because of a wrong passphrase.",
            .counter
        )
        out.sample(
            "x509_pkcs12_passphrase_failures_total",
            [("source_name", status.source.name)],
            Double(status.passphraseFailures)
        )
    }
}
