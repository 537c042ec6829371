import Foundation
import PushChecks

/// Human output for one inspected token key file (.p8).
struct TokenKeyRenderer {
    let style: TerminalStyle

    func render(_ file: FileReport) -> String {
        guard let key = file.tokenKey else { return file.path }
        var lines = [style.paint(file.path, .bold) + style.paint("  token key (.p8)", .dim)]
        var rows: [(String, String)] = []
        let keyIDSource = key.keyIDSource == "file_name" ? "  \(style.paint("(from the file name)", .dim))" : ""
        rows.append(("Key ID", key.keyID.map { $0 + keyIDSource } ?? style.paint("unknown (give --key-id)", .yellow)))
        rows.append(("Team ID", key.teamID ?? style.paint("not given (--team-id)", .yellow)))
        rows.append(("Algorithm", "\(key.algorithm) (EC \(key.curve))"))
        rows.append(("Topics", key.topics.isEmpty ? "any app of the team" : key.topics.joined(separator: "\n")))
        rows.append(
            (
                "Environments",
                key.environments.isEmpty
                    ? "sandbox and production" : key.environments.map(\.rawValue).joined(separator: " and ") + " only"
            )
        )
        rows.append(("Public key SHA-256", key.publicKeySha256))
        lines.append(contentsOf: style.rows(rows))
        lines.append(
            style.paint(
                "  A .p8 file records neither team nor restrictions: topics and environments are as given with --topic and --environment.",
                .dim
            )
        )
        for finding in file.findings {
            lines.append("  \(style.label(finding.severity)) \(finding.message)")
            if let hint = finding.hint { lines.append("    \(style.paint("→", .dim)) \(hint)") }
        }
        return lines.joined(separator: "\n")
    }
}
