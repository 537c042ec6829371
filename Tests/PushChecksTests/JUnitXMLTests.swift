import Foundation
import PushChecks
import TestSupport
import Testing

/// The JUnit document's text: what a credential's name or a finding may hold (XML's special
/// characters, control characters XML 1.0 cannot carry even as references, bidirectional marks)
/// never breaks the document nor reaches a reader raw, and the counts are the cases'.
struct JUnitXMLTests {
    static let hostile = "a<b>&\"quoted\" 'it' \u{01}bell\u{07} next\u{85}line \u{202E}reversed \u{FFFF}"

    static func report() -> JUnitReport {
        JUnitReport(
            name: "check",
            timestamp: Date(timeIntervalSince1970: 1_796_688_000),
            duration: 0.25,
            hostname: "ci-runner",
            properties: [("topic", hostile)],
            cases: [
                .init(name: "com.example.app (production)", classname: "apnsctl.check", outcome: .passed),
                .init(
                    name: hostile,
                    classname: "apnsctl.check",
                    outcome: .failed(type: "expiring", message: "line one\nline two " + hostile, details: hostile),
                    output: "told once"
                ),
                .init(
                    name: "com.example.other (production)",
                    classname: "apnsctl.check",
                    outcome: .error(type: "secret_store_unavailable", message: hostile, details: "")
                ),
                .init(
                    name: "com.example.dev (production)",
                    classname: "apnsctl.check",
                    outcome: .skipped(message: hostile)
                ),
            ]
        )
    }

    @Test func hostileTextIsEscapedAndTheDocumentIsValid() throws {
        let xml = Self.report().xml()
        // No character XML 1.0 refuses, raw or as a reference, and no raw bidirectional override.
        #expect(!xml.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(xml)")
        #expect(!xml.contains("&#1;") && !xml.contains("&#7;") && !xml.contains("\u{202E}"), "\(xml)")
        #expect(xml.contains("^Abell^G") && xml.contains("&lt;U+0085&gt;") && xml.contains("&lt;U+202E&gt;"))
        #expect(xml.contains("&lt;U+FFFF&gt;"), "\(xml)")
        #expect(xml.contains("a&lt;b&gt;&amp;&quot;quoted&quot; &apos;it&apos;"), "attributes: \(xml)")
        // A message's line break is kept as a reference, not folded into a space by the reader.
        #expect(xml.contains("line one&#10;line two"), "\(xml)")
        #expect(xml.contains("tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""), "\(xml)")
        #expect(xml.contains("timestamp=\"2026-12-08T00:00:00\" hostname=\"ci-runner\""), "\(xml)")
        #expect(xml.contains("time=\"0.250\""), "\(xml)")

        let folder = try TemporaryFolder()
        let file = folder.path("report.xml")
        try xml.write(toFile: file, atomically: true, encoding: .utf8)
        let schema = TestPaths.packageRoot.appendingPathComponent("Tests/Schemas/junit.xsd").path
        let checked = try CLI.runProgram("xmllint", ["--noout", "--schema", schema, file])
        #expect(checked.status == 0, "\(checked.stderr)\n\(xml)")
    }

    @Test func aFailuresTextIsNotRepeatedAsItsOutput() {
        let xml = JUnitReport(
            name: "check",
            timestamp: Date(),
            duration: 0,
            cases: [
                .init(
                    name: "com.example.app (production)",
                    classname: "apnsctl.check",
                    outcome: .failed(type: "expiring", message: "m", details: "the same"),
                    output: "the same"
                )
            ]
        ).xml()
        #expect(xml.components(separatedBy: "the same").count == 2, "\(xml)")
        #expect(!xml.contains("<system-out>"), "\(xml)")
    }
}
