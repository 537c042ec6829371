import Foundation
import PushCredentials

/// A credential ready to connect with: what it authenticates as, and what it was issued or
/// imported for (so that a deploy can be checked against it before connecting).
public struct LoadedCredential: Sendable {
    /// The alias, or the path of the file it was read from.
    public var name: String
    public var kind: StoredCredential.Kind
    public var client: ClientCredential
    public var environments: [PushEnvironment]
    public var topics: [String]
    /// The certificate file, for a certificate credential.
    public var certificate: CredentialFile?
    /// True when it was loaded from the store (``name`` is then its alias), false for a file.
    public var isStored = false

    public init(
        name: String,
        kind: StoredCredential.Kind,
        client: ClientCredential,
        environments: [PushEnvironment],
        topics: [String],
        certificate: CredentialFile?
    ) {
        self.name = name
        self.kind = kind
        self.client = client
        self.environments = environments
        self.topics = topics
        self.certificate = certificate
    }

    /// A certificate credential from a file that holds the certificate and its own key.
    public init(name: String, file: CredentialFile) throws {
        guard let key = file.privateKeyPKCS8 else {
            throw CredentialError(
                .noPrivateKey,
                path: file.path,
                "The file holds a certificate but no private key, so it cannot authenticate to APNs.",
                hint: "Use the .p12 exported with its key, or a PEM with certificate and key."
            )
        }
        if file.privateKey?.matchesCertificate == false {
            throw CredentialError(
                .keyMismatch,
                path: file.path,
                "The private key in the file does not belong to its certificate, so TLS client authentication cannot work.",
                hint: "Export the certificate together with its own key."
            )
        }
        self.init(
            name: name,
            kind: .certificate,
            client: .certificate(
                certificateDER: file.certificate.der,
                chainDER: file.chain.map(\.der),
                privateKey: key
            ),
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
            client: .token(key),
            environments: environments,
            topics: topics,
            certificate: nil
        )
    }

    /// The topic to push to unless told otherwise: the certificate's bundle ID, or the token
    /// key's first topic.
    public var defaultTopic: String? {
        certificate?.certificate.bundleID ?? topics.first
    }

    /// The default topic with the suffix a push type requires (`.voip`, `.complication`...),
    /// unless the bundle ID already has it, as a VoIP Services certificate's does.
    public func defaultTopic(for pushType: PushType) -> String? {
        defaultTopic.map { base in pushType.topicSuffix.map { base.hasSuffix($0) ? base : base + $0 } ?? base }
    }

    /// Findings that predict a rejection, checked before connecting.
    public func preflightFindings(
        environment: PushEnvironment,
        topic: String?,
        warnDays: Int = 30,
        at date: Date = Date()
    ) -> [Finding] {
        let expectations = CheckExpectations(date: date, warnDays: warnDays, environment: environment, topic: topic)
        if let certificate {
            return CredentialCheck.certificate(
                certificate,
                name: name,
                origin: "file",
                keyVerified: true,
                expectations: expectations
            ).findings
        }
        // A token key records no dates; what it was imported for is all there is to check.
        return CredentialCheck.tokenKeyScopeFindings(
            environments: environments,
            topics: topics,
            environment: environment,
            topic: topic
        )
    }
}

/// Loads the credential a person names: a stored alias, a certificate file read with a
/// password, or a `.p8` token key with its team ID (and key ID, unless the file name has it).
public struct CredentialLoader: Sendable {
    public var store: CredentialStore
    public var password: PasswordSource
    public var teamID: String?
    public var keyID: String?

    public init(store: CredentialStore, password: PasswordSource = .none, teamID: String? = nil, keyID: String? = nil) {
        self.store = store
        self.password = password
        self.teamID = teamID
        self.keyID = keyID
    }

    public func load(_ argument: String) throws -> LoadedCredential {
        switch try CredentialReference.resolve(argument, store: store) {
        case .stored(let stored) where stored.kind == .tokenKey:
            let key = try store.tokenKey(of: stored)
            var loaded = LoadedCredential(
                name: stored.alias,
                key: key,
                environments: stored.environments,
                topics: stored.topics
            )
            loaded.isStored = true
            return loaded
        case .stored(let stored):
            var loaded = try LoadedCredential(name: stored.alias, file: try store.identity(of: stored))
            loaded.isStored = true
            return loaded
        case .file(let path) where path.lowercased().hasSuffix(".p8"):
            guard let teamID else {
                throw CredentialError(
                    .teamIDRequired,
                    path: path,
                    "A token key file needs its team ID.",
                    hint: "Give the key's team ID (Apple Developer portal > Membership details)."
                )
            }
            return LoadedCredential(name: path, key: try ProviderKey(path: path, teamID: teamID, keyID: keyID))
        case .file(let path):
            return try LoadedCredential(name: path, file: try CredentialFile.read(path: path, password: password))
        }
    }
}
