import CredentialFormats
import Foundation
import PushChecks

/// Human output for one inspected file: a header line, then aligned label/value rows.
struct CertificateRenderer {
    let style: TerminalStyle

    func render(_ file: FileReport) -> String {
        guard let certificate = file.certificate else { return Untrusted.display(file.path) }
        var lines: [String] = []
        var header = style.paint(Untrusted.display(file.path), .bold)
        if let format = file.format { header += style.paint("  \(formatName(format))", .dim) }
        lines.append(header)

        var rows: [(String, String)] = []
        rows.append(("Subject", Untrusted.display(certificate.subject)))
        rows.append(
            (
                "Kind",
                certificate.isPushCertificate
                    ? certificate.kind.name : style.paint("not an Apple push certificate", .yellow)
            )
        )
        if let bundle = certificate.bundleId {
            rows.append(("Bundle ID", "\(Untrusted.display(bundle))  \(style.paint("(default topic)", .dim))"))
        }
        if let team = certificate.teamID { rows.append(("Team ID", team)) }
        if let organization = certificate.organization { rows.append(("Organisation", organization)) }
        rows.append(("Environments", environments(certificate)))
        if !certificate.topics.isEmpty {
            rows.append(
                (
                    "Topics",
                    certificate.topics.map { Untrusted.display("\($0.name) (\($0.kinds.joined(separator: ", ")))") }
                        .joined(
                            separator: "\n"
                        )
                )
            )
        }
        var issuer = Untrusted.display(certificate.issuer)
        if let generation = certificate.wwdrGeneration { issuer += style.paint("  (Apple WWDR \(generation))", .dim) }
        rows.append(("Issuer", issuer))
        rows.append(("Serial", certificate.serial))
        rows.append(("Signature", certificate.signatureAlgorithm))
        rows.append(("Public key", "\(certificate.publicKey.type) \(certificate.publicKey.bits) bits"))
        rows.append(("Valid", "\(Self.timestamp(certificate.notBefore)) → \(Self.timestamp(certificate.notAfter))"))
        rows.append(("Status", status(certificate)))
        rows.append(("SHA-256", certificate.sha256))
        rows.append(("SHA-1", certificate.sha1))
        if let protection = file.protection {
            rows.append(
                (
                    "Encryption",
                    "certificates \(protection.certificates); key \(protection.key); MAC \(protection.mac)"
                        + (protection.usesLegacyAlgorithms
                            ? style.paint("  (legacy: `openssl pkcs12` needs -legacy)", .dim) : "")
                )
            )
        }
        if let key = file.privateKey {
            let verdict =
                key.matchesCertificate
                ? style.paint("✓ matches the certificate", .green)
                : style.paint("✗ does NOT match the certificate", .red, .bold)
            rows.append(("Private key", "\(key.type) \(key.bits) bits, \(verdict)"))
        } else if file.format == .pkcs12 || file.format == .pem {
            rows.append(("Private key", style.paint("none in this file", .dim)))
        }
        if !file.chain.isEmpty {
            rows.append(
                (
                    "Chain",
                    file.chain.map {
                        "\(Untrusted.display($0.subject))  \(style.paint("expires \(Self.day($0.notAfter))", .dim))"
                    }.joined(
                        separator: "\n"
                    )
                )
            )
        }
        lines.append(contentsOf: style.rows(rows))
        for finding in file.findings {
            let mark = finding.severity == .problem ? style.paint("✗", .red, .bold) : style.paint("!", .yellow, .bold)
            lines.append("  \(mark) \(Untrusted.display(finding.message))")
            if let hint = finding.hint { lines.append("    \(style.paint("→", .dim)) \(Untrusted.display(hint))") }
        }
        return lines.joined(separator: "\n")
    }

    private func formatName(_ format: CredentialFile.Format) -> String {
        switch format {
        case .pkcs12: return "PKCS#12 bundle"
        case .pem: return "PEM"
        case .der: return "DER certificate"
        }
    }

    private func environments(_ certificate: CertificateReport) -> String {
        let names = certificate.environments.map(\.rawValue)
        let value: String
        switch names.count {
        case 0: value = style.paint("unknown", .yellow)
        case 2: value = "sandbox + production (universal)"
        default: value = names[0] + " only"
        }
        let source: String
        switch certificate.environmentSource {
        case .extensions: source = "from Apple's certificate extensions"
        case .commonName: source = "from the common name; the certificate has no environment extension"
        case .none: source = "nothing in the certificate says"
        }
        return "\(value)  \(style.paint("(\(source))", .dim))"
    }

    private func status(_ certificate: CertificateReport) -> String {
        let days = certificate.daysLeft
        switch certificate.status {
        case .valid: return style.paint("✓ valid", .green) + ", \(days) days left"
        case .expiring: return style.paint("! expiring", .yellow, .bold) + " in \(days) day\(days == 1 ? "" : "s")"
        case .expired: return style.paint("✗ expired", .red, .bold) + " \(-days) day\(days == -1 ? "" : "s") ago"
        case .notYetValid: return style.paint("✗ not yet valid", .red, .bold)
        }
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }

    static func day(_ date: Date) -> String {
        String(timestamp(date).prefix(10))
    }
}
