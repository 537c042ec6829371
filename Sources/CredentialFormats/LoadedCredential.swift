import Foundation

/// A credential ready to connect with: what it authenticates as, and what it was issued or
/// imported for (so that a deploy can be checked against it before connecting). The connection
/// module turns it into its TLS or provider-token credential; nothing here knows of sockets.
public struct LoadedCredential: Sendable {
    /// The alias, or the path of the file it was read from.
    public var name: String
    public var kind: CredentialKind
    /// The token key, for a token-key credential.
    public var tokenKey: ProviderKey?
    public var environments: [PushEnvironment]
    public var topics: [String]
    /// The certificate file, for a certificate credential.
    public var certificate: CredentialFile?
    /// True when it was loaded from the store (``name`` is then its alias), false for a file.
    public var isStored = false
    /// A token key held elsewhere (a secret manager signs with it): its tokens come from its
    /// source; ``tokenKey`` is then nil.
    public var remoteTokenKey: RemoteProviderKey?

    public init(
        name: String,
        kind: CredentialKind,
        tokenKey: ProviderKey?,
        environments: [PushEnvironment],
        topics: [String],
        certificate: CredentialFile?
    ) {
        self.name = name
        self.kind = kind
        self.tokenKey = tokenKey
        self.environments = environments
        self.topics = topics
        self.certificate = certificate
    }

    /// A certificate credential from a file that holds the certificate and its own key.
    public init(name: String, file: CredentialFile) throws {
        _ = try file.clientPrivateKey()
        self.init(
            name: name,
            kind: .certificate,
            tokenKey: nil,
            environments: file.certificate.environments,
            topics: file.certificate.coveredTopics,
            certificate: file
        )
    }

    /// A token-key credential.
    public init(name: String, key: ProviderKey, environments: [PushEnvironment] = [], topics: [String] = []) {
        self.init(
            name: name,
            kind: .tokenKey,
            tokenKey: key,
            environments: environments,
            topics: topics,
            certificate: nil
        )
    }

    /// The topic to push to unless told otherwise: the certificate's bundle ID, or the token
    /// key's first topic.
    /// A token key that never leaves the store that holds it.
    public init(
        name: String,
        remoteKey: RemoteProviderKey,
        environments: [PushEnvironment] = [],
        topics: [String] = []
    ) {
        self.init(
            name: name,
            kind: .tokenKey,
            tokenKey: nil,
            environments: environments,
            topics: topics,
            certificate: nil
        )
        remoteTokenKey = remoteKey
    }

    public var defaultTopic: String? {
        certificate?.certificate.bundleID ?? topics.first
    }

    /// The default topic with the suffix a push type requires (`.voip`, `.complication`...),
    /// unless the bundle ID already has it, as a VoIP Services certificate's does.
    public func defaultTopic(for pushType: PushType) -> String? {
        defaultTopic.map(pushType.topic(for:))
    }
}

/// What a credential is: a push certificate with its key, or a token key. The store's index
/// records it as `certificate` or `token_key`.
public enum CredentialKind: String, Codable, Sendable {
    case certificate
    case tokenKey = "token_key"
}
