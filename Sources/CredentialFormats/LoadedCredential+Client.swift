extension LoadedCredential {
    /// What the connection authenticates with: the certificate and its key in the TLS
    /// handshake, or the token key's provider tokens.
    public var client: ClientCredential {
        if let tokenKey { return .token(tokenKey) }
        if let remoteTokenKey { return .remoteToken(remoteTokenKey) }
        if let certificate, let key = certificate.privateKeyPKCS8 {
            return .certificate(
                certificateDER: certificate.certificate.der,
                chainDER: certificate.chain.map(\.der),
                privateKey: key
            )
        }
        return .none
    }
}
