import Foundation
import PushStore

/// What `inspect` says about a certificate signing request.
struct RequestReport: Encodable {
    var path: String
    var subject: String
    var keyType: String
    var keyBits: Int
    var publicKeyFingerprint: String
    var signatureValid: Bool
    var store: String
    /// The pending request in the store that holds this request's key, if any.
    var pendingRequest: String?
    /// A stored certificate with this request's public key (its request was completed), if any.
    var storedCredential: String?
    var problems: [String]

    init(_ request: CertificateRequest, store: CredentialStore) async {
        path = request.path
        subject = request.subject
        keyType = request.keyType
        keyBits = request.keyBits
        publicKeyFingerprint = request.publicKeyFingerprint
        signatureValid = request.signatureValid
        self.store = store.path
        pendingRequest = (try? await store.pendingRequest(publicKeyFingerprint: request.publicKeyFingerprint))?.alias
        storedCredential = nil
        for credential in (try? await store.list()) ?? [] where credential.kind == .certificate {
            let certificate = try? await store.certificate(of: credential)
            if certificate?.certificate.publicKeyFingerprint == request.publicKeyFingerprint {
                storedCredential = credential.alias
                break
            }
        }
        problems = []
        if !signatureValid {
            problems.append(
                "The request's signature does not verify with its public key: Apple's portal will refuse it."
            )
        }
        if keyType != "RSA" || keyBits != 2048 {
            problems.append(
                "The key is \(keyType) \(keyBits) bits; Apple's portal takes only RSA 2048 requests for push certificates."
            )
        }
    }
}

struct RequestRenderer {
    let style: TerminalStyle

    func render(_ report: RequestReport) -> String {
        var lines = [style.paint(report.path, .bold) + style.paint("  certificate signing request (CSR)", .dim)]
        let key: String
        if let alias = report.pendingRequest {
            key = style.paint("✓ held by the pending request \(alias)", .green) + " in the store at \(report.store)"
        } else if let alias = report.storedCredential {
            key = "its certificate is stored as \(alias) in the store at \(report.store)"
        } else {
            key = style.paint("no pending request in the store at \(report.store) holds it", .yellow)
        }
        let rows: [(String, String)] = [
            ("Subject", report.subject),
            ("Public key", "\(report.keyType) \(report.keyBits) bits"),
            ("Key SHA-256", report.publicKeyFingerprint),
            (
                "Signature",
                report.signatureValid
                    ? style.paint("✓ verifies", .green) : style.paint("✗ does not verify", .red, .bold)
            ),
            ("Private key", key),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        lines += rows.map { style.row($0, $1, width: width) }
        for problem in report.problems { lines.append("  \(style.paint("✗", .red, .bold)) \(problem)") }
        return lines.joined(separator: "\n")
    }
}
