import CredentialFormats
import Crypto
import Foundation
import PushCore
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
    /// The CA files trusted on top.
    public var caFiles: [String]
    /// Certificates in the store, the CA files' included.
    public var count: Int
    /// The certificates that may be one of APNs' roots (``APNsTrustRoots/table``): those whose
    /// encoding holds a root's name. Only these are parsed: parsing every certificate of a
    /// system's bundle (some 140) costs far more than the check itself, at every metrics scrape.
    public var candidates: [Certificate]

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
        var store = TrustStore(base: .system, basePath: nil, caFiles: caFiles, count: custom.count, candidates: custom)
        let blocks: [[UInt8]]
        if let caBundle {
            store.base = .bundle
            store.basePath = caBundle
            blocks = try bundleBlocks(caBundle)
        } else if let path = systemSearchPaths.first(where: { FileManager.default.isReadableFile(atPath: $0) }) {
            store.basePath = path
            // A system bundle with a block that does not parse fails swift-certificates' load as
            // a whole; the same holds here.
            blocks = (try? bundleBlocks(path)) ?? []
        } else {
            blocks = []
        }
        store.count += blocks.count
        let names = APNsTrustRoots.table.map { Array($0.name.utf8) }
        for der in blocks where names.contains(where: { der.contains($0) }) {
            if let certificate = try? Certificate(derEncoded: der) { store.candidates.append(certificate) }
        }
        return store
    }

    /// The DER blocks of a PEM bundle, not parsed as certificates.
    static func bundleBlocks(_ path: String) throws -> [[UInt8]] {
        let data = try ServerTrustEvaluator.readTrustFile(path, as: .bundle)
        let documents = try? PEMDocument.parseMultiple(pemString: String(decoding: data, as: UTF8.self))
            .filter { $0.discriminator == "CERTIFICATE" }
        guard let documents, !documents.isEmpty else {
            throw GatewayError(
                .caFileInvalid,
                "\(path): the CA bundle holds no readable certificate.",
                hint: "Give a PEM bundle of root certificates, such as the system's ca-certificates.crt.",
                trustFile: .bundle
            )
        }
        return documents.map(\.derBytes)
    }

    /// The certificates of a CA bundle given in place of the system's.
    static func loadBundle(_ path: String) throws -> [Certificate] {
        try ServerTrustEvaluator.loadCertificates(paths: [path], as: .bundle)
    }

    /// SHA-256 of a certificate's SubjectPublicKeyInfo, lower-case hex.
    public static func spkiSHA256(_ certificate: Certificate) -> String {
        // `subjectPublicKeyInfoBytes` is the key's bit string alone; the pin is over the whole
        // SubjectPublicKeyInfo (algorithm and key), as `openssl pkey -pubin -outform DER` writes it.
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(certificate.publicKey)) != nil else { return "" }
        return HexText.of(SHA256.hash(data: serializer.serializedBytes))
    }

    /// Whether `root` (by subject and key) is among `certificates`.
    static func holds(_ root: APNsTrustRoot, in certificates: [Certificate]) -> Bool {
        certificates.contains { NameText.describe($0.subject) == root.subject && spkiSHA256($0) == root.spkiSHA256 }
    }
}
