import Foundation
import PushMonitoring
import TestSupport
import Testing

/// The exposition renderer: what it writes is read back by Prometheus' own parser
/// (prometheus_client's, in the project's venv) as the families, labels and values given.
struct MetricsTextTests {
    /// The samples Prometheus' parser reads from `text`: one line per sample, name, labels
    /// (sorted, as JSON) and value as the parser prints it; families' help and type first.
    static func parsed(_ text: String) throws -> [String] {
        let folder = try TemporaryFolder()
        let file = folder.path("metrics.prom")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                print("family %s %s %s" % (family.name, family.type, json.dumps(family.documentation)))
                for sample in family.samples:
                    print("sample %s %s %r" % (sample.name, json.dumps(sample.labels, sort_keys=True), float(sample.value)))
            """
        let python = TestPaths.packageRoot.appendingPathComponent(".venv/bin/python").path
        let result = try CLI.runProgram(python, ["-c", script, file])
        try #require(result.status == 0, "Prometheus' parser refused the text: \(result.stderr)\n\(text)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func familiesAndSamplesAreReadBackAsGiven() throws {
        var metrics = MetricsText()
        metrics.family("apnsctl_credential_expiry_timestamp_seconds", "When each credential expires.")
        metrics.sample(
            "apnsctl_credential_expiry_timestamp_seconds",
            ["alias": "prod", "topic": "com.x"],
            1_700_000_000
        )
        metrics.sample("apnsctl_credential_expiry_timestamp_seconds", ["alias": "dev", "topic": "com.x"], 1.5)
        metrics.family("apnsctl_probes_total", "Probes made.", .counter)
        metrics.sample("apnsctl_probes_total", [:], 3)
        #expect(
            try Self.parsed(metrics.text) == [
                #"family apnsctl_credential_expiry_timestamp_seconds gauge "When each credential expires.""#,
                #"sample apnsctl_credential_expiry_timestamp_seconds {"alias": "prod", "topic": "com.x"} 1700000000.0"#,
                #"sample apnsctl_credential_expiry_timestamp_seconds {"alias": "dev", "topic": "com.x"} 1.5"#,
                #"family apnsctl_probes counter "Probes made.""#,
                #"sample apnsctl_probes_total {} 3.0"#,
            ]
        )
        // Timestamps stay exact integers in the text: no exponent, no fraction.
        #expect(metrics.text.contains("{alias=\"prod\",topic=\"com.x\"} 1700000000\n"))
    }

    /// Quotes and backslashes in a label value are escaped so that the value read back is the
    /// value given.
    @Test func quotesAndBackslashesAreReadBackAsGiven() throws {
        var metrics = MetricsText()
        metrics.family("x509_cert_not_after", "Not after.")
        let value = "O=\"Evil\" \\ Corp, CN=a\\\"b"
        metrics.sample("x509_cert_not_after", ["subject_O": value], 42)
        let lines = try Self.parsed(metrics.text)
        let encoded = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        #expect(
            lines == [
                #"family x509_cert_not_after gauge "Not after.""#,
                "sample x509_cert_not_after {\"subject_O\": \(encoded)} 42.0",
            ]
        )
    }

    /// A line break in a label value (a certificate's subject is the issuer's text) cannot start
    /// a line of its own: Prometheus reads one sample, not a forged second series.
    @Test func aLineBreakInALabelValueForgesNoSeries() throws {
        var metrics = MetricsText()
        metrics.family("x509_cert_not_after", "Not after.")
        let hostile = "Corp\nx509_cert_not_after{forged=\"1\"} 0\r\u{1B}[31m"
        metrics.sample("x509_cert_not_after", ["subject_O": hostile], 42)
        let samples = try Self.parsed(metrics.text).filter { $0.hasPrefix("sample") }
        #expect(samples.count == 1, "\(samples)")
        #expect(samples.first?.hasPrefix("sample x509_cert_not_after {\"subject_O\": \"Corp") == true, "\(samples)")
        #expect(samples.first?.hasSuffix("} 42.0") == true, "\(samples)")
        #expect(!metrics.text.contains("\nx509_cert_not_after{forged"))
        #expect(!metrics.text.contains("\u{1B}") && !metrics.text.contains("\r"))
    }

    /// A series written twice would make Prometheus refuse the whole scrape: the first stays.
    @Test func aSeriesWrittenTwiceKeepsTheFirstValue() throws {
        var metrics = MetricsText()
        metrics.family("apnsctl_check_success", "Whether the check ran.")
        metrics.sample("apnsctl_check_success", ["store": "a"], 1)
        metrics.sample("apnsctl_check_success", ["store": "a"], 0)
        metrics.sample("apnsctl_check_success", ["store": "b"], 0)
        #expect(
            try Self.parsed(metrics.text).filter { $0.hasPrefix("sample") } == [
                #"sample apnsctl_check_success {"store": "a"} 1.0"#,
                #"sample apnsctl_check_success {"store": "b"} 0.0"#,
            ]
        )
    }

    @Test(
        arguments: [
            (0.0, "0"), (-3.0, "-3"), (1_700_000_000.0, "1700000000"), (0.25, "0.25"), (.nan, "NaN"),
            (.infinity, "+Inf"), (-.infinity, "-Inf"), (1e16, "1e+16"),
        ] as [(Double, String)]
    )
    func valuesAreSpelledAsPrometheusReadsThem(_ value: Double, _ spelled: String) throws {
        #expect(MetricsText.format(value) == spelled)
        var metrics = MetricsText()
        metrics.family("apnsctl_value", "A value.")
        metrics.sample("apnsctl_value", [:], value)
        let sample = try #require(try Self.parsed(metrics.text).last)
        let read = try #require(Double(String(sample.split(separator: " ").last ?? "")))
        #expect(read == value || (read.isNaN && value.isNaN), "\(sample)")
    }
}
