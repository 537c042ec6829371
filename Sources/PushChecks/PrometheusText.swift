import Foundation
import PushStore

/// Prometheus text-format helpers shared by the libraries that publish metrics.
public enum PrometheusExport {
    /// Label values escape backslash, double quote and newline; other control characters (a CR or
    /// ESC in a certificate's subject) would make a scraper reject the whole file, so they are
    /// shown in caret notation first.
    public static func escape(_ value: String) -> String {
        Untrusted.display(value)
            .replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
