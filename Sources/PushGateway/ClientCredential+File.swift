import PushCredentials

extension ClientCredential {
    /// Builds a certificate credential from a credential file that holds a key
    /// (``CredentialFile/privateKeyPKCS8``).
    public static func certificate(_ file: CredentialFile) throws -> ClientCredential {
        guard let key = file.privateKeyPKCS8 else {
            throw GatewayError(
                .invalidCredential,
                "\(file.path) holds no private key, so it cannot authenticate a connection.",
                hint: "Export the certificate together with its private key (a .p12 from Keychain Access)."
            )
        }
        return .certificate(certificateDER: file.certificate.der, chainDER: file.chain.map(\.der), privateKey: key)
    }
}
