import Foundation
import PushGateway
import PushStore

/// Human output for a handshake: phases as a bar chart (think httpstat), then TLS and HTTP/2 facts.
struct HandshakeRenderer {
    let style: TerminalStyle

    /// Whether the handshake got far enough to measure anything: a connection refused before
    /// its first phase (an address family the name lacks, a bad --resolve) has no table to show,
    /// only its error.
    static func measuredAnything(_ report: HandshakeReport) -> Bool {
        let phases = [
            report.dnsDuration, report.tcpConnectDuration, report.proxyConnectDuration, report.tlsHandshakeDuration,
            report.http2ReadyDuration,
        ]
        return phases.contains { $0 != nil } || report.resolvedAddress != nil
    }

    func render(_ report: HandshakeReport) -> String {
        var lines: [String] = []
        let phases: [(String, Double?)] = [
            ("DNS lookup", report.dnsDuration),
            ("TCP connect", report.tcpConnectDuration),
            ("Proxy CONNECT", report.proxyConnectDuration),
            ("TLS handshake", report.tlsHandshakeDuration),
            ("HTTP/2 ready", report.http2ReadyDuration),
        ].filter { $0.1 != nil || $0.0 != "Proxy CONNECT" }
        let longest = phases.compactMap(\.1).max() ?? 0
        let barWidth = max(10, min(40, style.width - 40))
        for (name, duration) in phases {
            guard let duration else {
                lines.append("  \(name.padding(toLength: 14, withPad: " ", startingAt: 0))  \(style.paint("—", .dim))")
                continue
            }
            let cells = longest > 0 ? max(1, Int((duration / longest * Double(barWidth)).rounded())) : 1
            let bar =
                style.paint(String(repeating: "█", count: cells), .cyan)
                + String(repeating: " ", count: barWidth - cells)
            lines.append(
                "  \(name.padding(toLength: 14, withPad: " ", startingAt: 0))  \(bar)  \(Self.milliseconds(duration))"
            )
        }
        if let total = report.totalDuration {
            lines.append(
                "  " + String(repeating: " ", count: 16 + barWidth)
                    + style.paint("total \(Self.milliseconds(total))", .bold)
            )
        }
        lines.append("")
        var rows: [(String, String)] = []
        if let address = report.resolvedAddress {
            let family = report.addressFamily.flatMap(AddressFamily.init(rawValue:)).map { " (\($0.name))" } ?? ""
            let others = report.resolvedAddresses.filter { $0 != address }
            rows.append(
                (
                    "Address",
                    address + family + (others.isEmpty ? "" : ", of \(report.resolvedAddresses.count) resolved")
                )
            )
        }
        if let proxy = report.proxy { rows.append(("Proxy", proxy)) }
        var tls = report.tlsVersion ?? "—"
        if let cipher = report.cipherSuite { tls += ", \(cipher)" }
        tls += ", ALPN " + (report.alpn ?? "none")
        rows.append(("TLS", tls))
        if !report.serverCertificates.isEmpty {
            rows.append(
                (
                    "Server chain",
                    report.serverCertificates.enumerated().map { index, certificate in
                        "\(index + 1). \(Untrusted.display(certificate.subject))\n   issued by \(Untrusted.display(certificate.issuer))\n   "
                            + style.paint("expires \(CertificateRenderer.day(certificate.notAfter))", .dim)
                    }.joined(separator: "\n")
                )
            )
        }
        rows.append(("Trust", trust(report)))
        if let anchor = report.anchor { rows.append(("Anchor", self.anchor(anchor, endpoint: report.endpoint))) }
        if let streams = report.maxConcurrentStreams { rows.append(("HTTP/2", "MAX_CONCURRENT_STREAMS \(streams)")) }
        lines.append(contentsOf: style.rows(rows))
        return lines.joined(separator: "\n")
    }

    private func trust(_ report: HandshakeReport) -> String {
        let source: String
        switch report.trustSource {
        case .system: source = "system trust store"
        case .systemAndCustom: source = "system trust store + --ca"
        case .custom: source = "--ca only"
        case .bundle: source = "--ca-bundle"
        case .bundleAndCustom: source = "--ca-bundle + --ca"
        }
        let detail = report.trustDetail.map { " — \($0)" } ?? ""
        switch report.trust {
        case .trusted: return style.paint("✓ trusted", .green) + " (\(source))"
        case .untrusted: return style.paint("✗ untrusted", .red, .bold) + " (\(source))\(detail)"
        case .hostnameMismatch:
            return style.paint("✗ certificate does not name \(report.endpoint.host)", .red, .bold) + detail
        case .expired: return style.paint("✗ expired or not yet valid", .red, .bold) + detail
        case .notChecked: return style.paint("not checked (the handshake stopped before)", .dim)
        }
    }

    /// The root the chain ends at, where it came from, and whether it is APNs' root.
    private func anchor(_ anchor: HandshakeReport.Anchor, endpoint: Endpoint) -> String {
        let origin: String
        switch anchor.origin {
        case .system: origin = "system trust store"
        case .bundle: origin = "--ca-bundle"
        case .caFile: origin = "--ca"
        }
        var text = "\(Untrusted.display(anchor.subject)) (\(origin))"
        if let root = anchor.apnsRoot {
            text += "\n" + style.paint("APNs' root \"\(root)\"", .dim)
        } else if endpoint.isApple {
            text +=
                "\n" + style.paint("not an APNs root: something between here and APNs signs this connection", .yellow)
        }
        text += "\n" + style.paint("SPKI SHA-256 \(anchor.spkiSHA256)", .dim)
        return text
    }

    static func milliseconds(_ seconds: Double) -> String {
        // Interpolated, not String(format:), which costs a cold `send` its variadic-argument
        // machinery's first use for one number.
        seconds < 0.001
            ? "<1 ms" : seconds < 10 ? "\(Int((seconds * 1000).rounded())) ms" : String(format: "%.1f s", seconds)
    }
}
