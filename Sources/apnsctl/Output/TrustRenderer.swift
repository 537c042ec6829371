import Foundation
import PushGateway
import PushStore

/// Human output for a trust-store check: the store, each environment's root, the table's roots.
struct TrustRenderer {
    let style: TerminalStyle

    func render(_ check: TrustStoreCheck) -> String {
        var lines = ["Trust store  \(store(check.store))"]
        for file in check.store.caFiles { lines.append("             + --ca \(file)") }
        lines.append("")
        for verdict in check.environments { lines += environment(verdict) }
        lines.append("")
        lines.append("APNs roots (since 2021)")
        for root in check.roots {
            let mark =
                root.present
                ? style.paint("✓", .green) : root.role == .previous ? style.paint("-", .dim) : style.paint("✗", .red)
            let role: String
            switch root.role {
            case .current: role = "current"
            case .upcoming: role = "announced"
            case .previous: role = "previous"
            }
            let held =
                root.present
                ? "in the store" : root.role == .previous ? "not in the store (no longer needed)" : "missing"
            lines.append("  \(mark) \(root.name)  \(style.paint("\(role), \(held)", .dim))")
            lines.append("      " + style.paint("SPKI SHA-256 \(root.spkiSHA256)", .dim))
        }
        lines.append("")
        lines += verdictLines(check)
        return lines.joined(separator: "\n")
    }

    /// The verdict and fix, as preflight shows them above its credentials.
    func verdictLines(_ check: TrustStoreCheck) -> [String] {
        var lines: [String] = []
        if let problem = check.problem {
            lines.append(style.paint("✗ not ready: ", .red, .bold) + problem)
        } else if let warning = check.warning {
            lines.append(style.paint("! ", .yellow, .bold) + warning)
        } else {
            let roots = Set(check.environments.map(\.currentRoot)).sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            lines.append(style.paint("✓ ", .green, .bold) + "the trust store holds \(roots), the root APNs chains to")
        }
        if let fix = check.fix { lines.append("  " + style.paint("→ \(fix)", .dim)) }
        return lines
    }

    private func environment(_ verdict: TrustStoreCheck.EnvironmentVerdict) -> [String] {
        let name = verdict.environment.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
        let mark = verdict.currentRootPresent ? style.paint("✓", .green, .bold) : style.paint("✗", .red, .bold)
        var lines = [
            "  \(mark) \(name)  \(verdict.currentRoot)  "
                + (verdict.currentRootPresent ? "present" : style.paint("missing", .red, .bold))
        ]
        if let upcoming = verdict.upcomingRoot, let present = verdict.upcomingRootPresent {
            let when = verdict.upcomingSince.map { " from \(CertificateRenderer.day($0))" } ?? ""
            lines.append(
                "      then \(upcoming)\(when)  "
                    + (present ? "present" : style.paint("missing", .yellow, .bold))
            )
        }
        return lines
    }

    private func store(_ store: TrustStoreCheck.Store) -> String {
        let count = "\(store.certificates) certificate\(store.certificates == 1 ? "" : "s")"
        switch store.base {
        case .system: return store.path.map { "\($0) (the system's, \(count))" } ?? "none found on this system"
        case .bundle: return "\(store.path ?? "?") (--ca-bundle, \(count))"
        }
    }
}
