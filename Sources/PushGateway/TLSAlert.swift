import Foundation
import X509

/// The TLS alerts with which a server refuses a client certificate (RFC 8446 §6.2), found in
/// the TLS library's error text. With TLS 1.3 the client finishes its side of the handshake
/// before the server has judged its certificate, so the refusal arrives as an alert right after
/// the handshake, where it would otherwise look like a connection closed for no reason.
enum TLSAlert: String, CaseIterable, Sendable {
    case certificateExpired = "certificate_expired"
    case certificateRevoked = "certificate_revoked"
    case unknownCA = "unknown_ca"
    case badCertificate = "bad_certificate"
    case certificateUnknown = "certificate_unknown"
    case certificateRequired = "certificate_required"
    case unsupportedCertificate = "unsupported_certificate"
    case accessDenied = "access_denied"

    /// The alert named in an error's text (BoringSSL spells them `SSLV3_ALERT_CERTIFICATE_EXPIRED`,
    /// `TLSV1_ALERT_UNKNOWN_CA`…), if any.
    init?(errorText text: String) {
        let upper = text.uppercased()
        guard let found = Self.allCases.first(where: { upper.contains("ALERT_" + $0.rawValue.uppercased()) }) else {
            return nil
        }
        self = found
    }

    /// The error for a server that refused `credential` with this alert.
    func error(credential: ClientCredential, address: String, now: Date = Date()) -> GatewayError {
        let notAfter: Date? = {
            guard case .certificate(let der, _, _) = credential,
                let certificate = try? Certificate(derEncoded: der)
            else { return nil }
            return certificate.notValidAfter
        }()
        let day = notAfter.map { Self.day($0) }
        let what: String
        let hint: String
        switch self {
        case .certificateExpired:
            what =
                day.map {
                    notAfter! < now ? "it expired on \($0)" : "it is valid until \($0), so check this machine's clock"
                }
                ?? "it has expired"
            hint = "Create a new push certificate in the Apple Developer portal and import it."
        case .certificateRevoked:
            what = "it has been revoked" + (day.map { " (it would have been valid until \($0))" } ?? "")
            hint = "Create a new push certificate in the Apple Developer portal and import it."
        case .unknownCA:
            what = "the server does not trust its issuer"
            hint =
                "Use a push certificate issued by Apple for this environment (for a local gateway: one signed by its client CA)."
        case .certificateRequired:
            what = "the server requires a client certificate and got none"
            hint = "Connect with a push certificate, or with a token key where the server accepts provider tokens."
        case .badCertificate, .certificateUnknown, .unsupportedCertificate, .accessDenied:
            what = "the server would not accept it" + (day.map { " (valid until \($0))" } ?? "")
            hint =
                "Check that it is a push certificate for this gateway's environment, and that it has not expired or been revoked."
        }
        return GatewayError(
            .clientCertificateRejected,
            "The server at \(address) refused the client certificate (TLS alert \(rawValue)): \(what).",
            hint: hint,
            server: address
        )
    }

    private static func day(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }
}
