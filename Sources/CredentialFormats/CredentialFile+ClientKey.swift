import Foundation

extension CredentialFile {
    /// The PKCS#8 key a TLS client presents with this file's certificate. The one place that
    /// refuses a certificate without its key, or with a key that is not its own: importing,
    /// loading and connecting all ask here, so they refuse alike.
    public func clientPrivateKey() throws -> SecretBytes {
        guard let key = privateKeyPKCS8 else {
            throw CredentialError(
                .noPrivateKey,
                path: path,
                "The file holds a certificate but no private key, so it cannot authenticate to APNs.",
                hint:
                    "Export the certificate together with its key (Keychain Access: select both, File > Export Items, .p12), or give a PEM with certificate and key."
            )
        }
        guard privateKey?.matchesCertificate != false else {
            throw CredentialError(
                .keyMismatch,
                path: path,
                "The private key in the file does not belong to its certificate, so TLS client authentication cannot work.",
                hint: "Export the certificate together with its own key."
            )
        }
        return key
    }
}
