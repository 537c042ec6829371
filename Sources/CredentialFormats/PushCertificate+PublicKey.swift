import Foundation

extension PushCertificate {
    /// SHA-256 of the certificate's SubjectPublicKeyInfo, upper-case hex with colons: the same
    /// value the certificate signing request it was issued for shows.
    public var publicKeyFingerprint: String { OpenSSL.publicKeyFingerprint(certificateDER: der) ?? "unknown" }
}
