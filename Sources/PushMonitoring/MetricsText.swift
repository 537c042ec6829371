import Foundation
import PushChecks

/// Prometheus text exposition (format 0.0.4): every family with `# HELP` and `# TYPE`, samples
/// without timestamps (node_exporter's textfile collector refuses them), label values escaped.
public struct MetricsText: Sendable {
    public enum Kind: String, Sendable { case gauge, counter }

    private var lines: [String] = []
    /// A series written twice would make Prometheus refuse the whole scrape: the first one stays.
    private var written: Set<String> = []

    public init() {}

    public mutating func family(_ name: String, _ help: String, _ kind: Kind = .gauge) {
        lines.append("# HELP \(name) \(help)")
        lines.append("# TYPE \(name) \(kind.rawValue)")
    }

    public mutating func sample(_ name: String, _ labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        sample(name, labels.map { ($0.key, $0.value) }, value)
    }

    public mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        let rendered =
            labels.isEmpty
            ? name : name + "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
        guard written.insert(rendered).inserted else { return }
        lines.append("\(rendered) \(Self.format(value))")
    }

    public var text: String { lines.joined(separator: "\n") + "\n" }

    /// Integers without a fraction (timestamps stay exact), NaN and infinities as Prometheus spells them.
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Label values escaped, control characters in caret notation (see ``PrometheusExport/escape(_:)``).
    public static func escape(_ value: String) -> String { PrometheusExport.escape(value) }
}
