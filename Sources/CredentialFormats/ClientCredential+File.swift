extension ClientCredential {
    /// Builds a certificate credential from a credential file that holds its own key
    /// (``CredentialFile/clientPrivateKey()`` refuses anything else).
    public static func certificate(_ file: CredentialFile) throws -> ClientCredential {
        .certificate(
            certificateDER: file.certificate.der,
            chainDER: file.chain.map(\.der),
            privateKey: try file.clientPrivateKey()
        )
    }
}
