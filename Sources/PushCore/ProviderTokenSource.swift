import Foundation

/// A provider token and when it was issued (its `iat`).
public struct IssuedProviderToken: Sendable, CustomStringConvertible {
    /// The JWT: a secret for as long as it is valid. Never logged, never in an error.
    public let jwt: String
    public let issuedAt: Date

    public init(jwt: String, issuedAt: Date) {
        self.jwt = jwt
        self.issuedAt = issuedAt
    }

    public var description: String { "provider token issued at \(Int(issuedAt.timeIntervalSince1970))" }
}

/// Where the provider tokens of a key held elsewhere come from: a key that never leaves a
/// secret manager (Vault's Transit signs with it), and a token a whole fleet shares, so that
/// APNs sees one token per key per refresh period instead of one per process
/// (`TooManyProviderTokenUpdates`). The source decides when a new token is made; a connection
/// asks it before it sends and uses what it answers until it asks again.
public protocol ProviderTokenSource: Sendable {
    var keyID: String { get }
    var teamID: String { get }
    /// A token that is valid now, with its issue time. May wait on the network.
    func currentToken() async throws -> IssuedProviderToken
    /// APNs answered `InvalidProviderToken` to `token`: the source must not answer it again
    /// (a shared token that is not what it claims is replaced).
    func tokenRejected(_ token: IssuedProviderToken) async
}

extension ProviderTokenSource {
    /// By default a refused token is simply asked for again.
    public func tokenRejected(_ token: IssuedProviderToken) async {}
}

/// A token key whose private key is not here: its identifiers, its public key when known (for
/// fingerprints and reports), and the source of its tokens.
public struct RemoteProviderKey: Sendable {
    public let keyID: String
    public let teamID: String
    /// The public key's SubjectPublicKeyInfo DER, when the store recorded it.
    public let publicKeyDER: [UInt8]?
    public let source: any ProviderTokenSource

    public init(source: any ProviderTokenSource, publicKeyDER: [UInt8]? = nil) {
        keyID = source.keyID
        teamID = source.teamID
        self.publicKeyDER = publicKeyDER
        self.source = source
    }
}
