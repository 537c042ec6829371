import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A run as JUnit XML, the test report CI systems read (GitLab's test reports, Jenkins' junit
/// step, GitHub's test-report actions): one test suite, one test case per thing judged, a
/// failure, an error or a skip with what was found and what to do.
///
/// The shape is the common one those readers share: `testsuites` with `name`, `tests`,
/// `failures`, `errors` and `time` (no `skipped`: the schemas they validate against refuse it
/// there), one `testsuite` with the counts, `skipped` included, the run's `timestamp` (UTC, as
/// `2026-12-05T05:12:28`), `hostname` and `time`, and `testcase`s with `classname` and `name`.
public struct JUnitReport: Sendable {
    public struct TestCase: Sendable, Equatable {
        public enum Outcome: Sendable, Equatable {
            case passed
            /// Checked, and found wanting: `type` is the finding's code.
            case failed(type: String, message: String, details: String)
            /// Could not be checked: `type` is the error's code.
            case error(type: String, message: String, details: String)
            /// Not judged, with why.
            case skipped(message: String)
        }

        /// What CI shows as the test's name: the app and its environment.
        public var name: String
        /// The group CI files the test under: the command.
        public var classname: String
        public var outcome: Outcome
        /// What is worth reading even when the test passed (warnings, the credentials judged).
        public var output: String

        public init(name: String, classname: String, outcome: Outcome, output: String = "") {
            self.name = name
            self.classname = classname
            self.outcome = outcome
            self.output = output
        }
    }

    /// The suite's name: the command, as the front end names it.
    public var name: String
    /// When the run started.
    public var timestamp: Date
    /// How long it took, in seconds.
    public var duration: Double
    public var hostname: String
    /// What the run was asked (`environment` → `production`), as the suite's properties.
    public var properties: [(name: String, value: String)]
    public var cases: [TestCase]

    public init(
        name: String,
        timestamp: Date,
        duration: Double,
        hostname: String = JUnitReport.localHostname,
        properties: [(name: String, value: String)] = [],
        cases: [TestCase]
    ) {
        self.name = name
        self.timestamp = timestamp
        self.duration = duration
        self.hostname = hostname
        self.properties = properties
        self.cases = cases
    }

    public var failures: Int { cases.filter { if case .failed = $0.outcome { true } else { false } }.count }
    public var errors: Int { cases.filter { if case .error = $0.outcome { true } else { false } }.count }
    public var skipped: Int { cases.filter { if case .skipped = $0.outcome { true } else { false } }.count }

    /// This machine's name as `gethostname` gives it (no name lookup).
    public static var localHostname: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// The report as an XML document.
    public func xml() -> String {
        let time = String(format: "%.3f", max(0, duration))
        let counts =
            "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\""
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            "<testsuites name=\(Self.attribute(name)) \(counts) time=\"\(time)\">",
            "  <testsuite name=\(Self.attribute(name)) \(counts) skipped=\"\(skipped)\" time=\"\(time)\" "
                + "timestamp=\"\(Self.timestamp(timestamp))\" hostname=\(Self.attribute(hostname))>",
        ]
        if !properties.isEmpty {
            lines.append("    <properties>")
            for property in properties {
                lines.append(
                    "      <property name=\(Self.attribute(property.name)) value=\(Self.attribute(property.value))/>"
                )
            }
            lines.append("    </properties>")
        }
        for testCase in cases {
            // No time of its own: the cases are judged together, and the suite gives the run's.
            let opening =
                "    <testcase classname=\(Self.attribute(testCase.classname)) name=\(Self.attribute(testCase.name))"
            var body: [String] = []
            var told = ""
            switch testCase.outcome {
            case .passed:
                break
            case .failed(let type, let message, let details):
                told = details
                body.append(
                    "      <failure type=\(Self.attribute(type)) message=\(Self.attribute(message))>\(Self.text(details))</failure>"
                )
            case .error(let type, let message, let details):
                told = details
                body.append(
                    "      <error type=\(Self.attribute(type)) message=\(Self.attribute(message))>\(Self.text(details))</error>"
                )
            case .skipped(let message):
                body.append("      <skipped message=\(Self.attribute(message))/>")
            }
            // The output once: a failure's text already holds it.
            if !testCase.output.isEmpty, testCase.output != told {
                body.append("      <system-out>\(Self.text(testCase.output))</system-out>")
            }
            if body.isEmpty {
                lines.append(opening + "/>")
            } else {
                lines.append(opening + ">")
                lines += body
                lines.append("    </testcase>")
            }
        }
        lines += ["  </testsuite>", "</testsuites>"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `2026-12-05T05:12:28`, in UTC: the form the JUnit schemas take (no zone).
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d",
            parts.year ?? 1970,
            parts.month ?? 1,
            parts.day ?? 1,
            parts.hour ?? 0,
            parts.minute ?? 0,
            parts.second ?? 0
        )
    }

    /// An attribute value, quoted: newlines and tabs kept as character references.
    static func attribute(_ value: String) -> String { "\"" + escape(value, inAttribute: true) + "\"" }

    /// Element text.
    static func text(_ value: String) -> String { escape(value, inAttribute: false) }

    /// XML's five special characters as entities; the control characters XML 1.0 cannot carry at
    /// all (not even as references: a reader refuses the document) shown as `^A`, and the other
    /// characters a terminal or a page could be fooled by (C1 controls, bidirectional marks, the
    /// noncharacters U+FFFE and U+FFFF) as `<U+…>`, as every other report of the project shows
    /// them.
    static func escape(_ value: String, inAttribute: Bool) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += inAttribute ? "&quot;" : "\""
            case "'": result += inAttribute ? "&apos;" : "'"
            case "\n": result += inAttribute ? "&#10;" : "\n"
            case "\t": result += inAttribute ? "&#9;" : "\t"
            case "\r": result += "&#13;"
            case _ where Untrusted.isUnsafe(scalar):
                result += escape(Untrusted.display(String(scalar)), inAttribute: inAttribute)
            case "\u{FFFE}", "\u{FFFF}":
                result += "&lt;U+" + String(scalar.value, radix: 16, uppercase: true) + "&gt;"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

extension JUnitReport {
    /// A run that stopped before it judged anything (a store that could not be read, nothing to
    /// check): one test case in error with why and what to do, so that CI shows the reason
    /// rather than a script that failed.
    public static func stopped(
        suite: String,
        classname: String,
        error: ReportedError,
        startedAt: Date,
        duration: Double,
        hostname: String = JUnitReport.localHostname
    ) -> JUnitReport {
        JUnitReport(
            name: suite,
            timestamp: startedAt,
            duration: duration,
            hostname: hostname,
            cases: [
                TestCase(
                    name: suite,
                    classname: classname,
                    outcome: .error(
                        type: error.code,
                        message: error.message,
                        details: error.hint.map { "fix: \($0)" } ?? ""
                    )
                )
            ]
        )
    }
}
