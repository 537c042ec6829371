import Crypto
import Foundation
import PushCredentials
import SwiftASN1
import X509

/// The roots a connection trusts, built as the handshake builds them: the system's bundle (the
/// file swift-certificates reads for `CertificateStore.systemTrustRoots`) or a bundle given in
/// its place, plus the CA files given on top.
public struct TrustStore: Sendable {
    /// Where the base roots come from.
    public enum Base: String, Codable, Sendable {
        /// The operating system's bundle.
        case system
        /// A bundle given in place of the system's.
        case bundle
    }

    public var base: Base
    /// The file the base roots were read from; nil when no system bundle was found.
    public var basePath: String?
    public var baseRoots: [Certificate]
    /// The CA files trusted on top, and their certificates.
    public var caFiles: [String]
    public var customRoots: [Certificate]

    /// Every root trusted.
    public var roots: [Certificate] { baseRoots + customRoots }

    /// Where swift-certificates looks for the system's roots (`TrustRootLoading.swift`), in its
    /// order: the first file that can be read is the whole store.
    public static let systemSearchPaths = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Arch, Alpine
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL
    ]

    /// The system's bundle, or `caBundle` in its place, plus `caFiles`. An unreadable or empty
    /// file given throws a ``GatewayError`` naming it; a missing system bundle is an empty base
    /// (``basePath`` nil), which the check reports.
    public static func load(caBundle: String? = nil, caFiles: [String] = []) throws -> TrustStore {
        let custom = try ServerTrustEvaluator.loadCertificates(paths: caFiles)
        if let caBundle {
            return TrustStore(
                base: .bundle,
                basePath: caBundle,
                baseRoots: try loadBundle(caBundle),
                caFiles: caFiles,
                customRoots: custom
            )
        }
        for path in systemSearchPaths where FileManager.default.isReadableFile(atPath: path) {
            // A system bundle with a block that does not parse fails swift-certificates' load as
            // a whole; the same holds here.
            let roots = (try? loadBundle(path)) ?? []
            return TrustStore(base: .system, basePath: path, baseRoots: roots, caFiles: caFiles, customRoots: custom)
        }
        return TrustStore(base: .system, basePath: nil, baseRoots: [], caFiles: caFiles, customRoots: custom)
    }

    /// The certificates of a CA bundle given in place of the system's.
    static func loadBundle(_ path: String) throws -> [Certificate] {
        do {
            return try ServerTrustEvaluator.loadCertificates(paths: [path])
        } catch let error as GatewayError {
            throw GatewayError(
                error.code,
                error.message.replacingOccurrences(of: "the CA file", with: "the CA bundle"),
                hint: error.code == .caFileInvalid
                    ? "Give a PEM bundle of root certificates, such as the system's ca-certificates.crt." : error.hint
            )
        }
    }

    /// SHA-256 of a certificate's SubjectPublicKeyInfo, lower-case hex.
    public static func spkiSHA256(_ certificate: Certificate) -> String {
        // `subjectPublicKeyInfoBytes` is the key's bit string alone; the pin is over the whole
        // SubjectPublicKeyInfo (algorithm and key), as `openssl pkey -pubin -outform DER` writes it.
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate.publicKey)) != nil else { return "" }
        return SHA256.hash(data: serializer.serializedBytes).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `root` (by subject and key) is among `certificates`.
    static func holds(_ root: APNsTrustRoot, in certificates: [Certificate]) -> Bool {
        certificates.contains { $0.subject.description == root.subject && spkiSHA256($0) == root.spkiSHA256 }
    }
}
