import CredentialFormats
import Foundation

extension CredentialStore {
    // MARK: Rotation that cannot go backwards

    /// Refuses a certificate that APNs would refuse today: expired, or not valid yet.
    static func refuseOutsideValidity(_ file: CredentialFile, at now: Date) throws {
        let certificate = file.certificate
        let window =
            "valid \(MessageDate.day(certificate.notBefore)) to \(MessageDate.day(certificate.notAfter))"
        if certificate.notAfter <= now {
            throw CredentialError(
                .outsideValidity,
                path: file.path,
                "This certificate expired on \(MessageDate.day(certificate.notAfter)) (\(window); today is \(MessageDate.day(now))), so APNs would refuse it; nothing was imported.",
                hint: "Create a new certificate in the Apple Developer portal and import that one."
            )
        }
        if certificate.notBefore > now {
            throw CredentialError(
                .outsideValidity,
                path: file.path,
                "This certificate is not valid until \(MessageDate.day(certificate.notBefore)) (\(window); today is \(MessageDate.day(now))), so APNs would refuse it for now; nothing was imported.",
                hint: "Check this machine's clock, or import it once it is valid."
            )
        }
    }

    /// Refuses a rotation that would put a certificate that expires sooner in the place of the
    /// one it replaces (typically an old bundle imported by mistake).
    static func refuseShorterExpiry(_ file: CredentialFile, replacing old: StoredCredential) throws {
        let new = file.certificate.notAfter
        guard old.kind == .certificate, let oldExpiry = old.notAfter, new < oldExpiry else { return }
        throw CredentialError(
            .expiresSooner,
            path: file.path,
            "This certificate expires on \(MessageDate.day(new)), sooner than \(old.alias), which it would replace and which expires on \(MessageDate.day(oldExpiry)); nothing changed.",
            hint: "Check that this is the newer certificate; to replace it all the same, say so explicitly.",
            alias: old.alias
        )
    }

    /// Refuses a rotation that would stop serving an environment or topic the replaced
    /// credential serves: a sandbox certificate in place of a universal one would end every
    /// production push under the alias that scripts use.
    static func refuseNarrowerCoverage(_ file: CredentialFile, replacing old: StoredCredential) throws {
        guard old.kind == .certificate else { return }
        let certificate = file.certificate
        let lostEnvironments = old.environments.filter { !certificate.environments.contains($0) }
        let lostTopics = old.topics.filter { !certificate.coveredTopics.contains($0) }
        guard !lostEnvironments.isEmpty || !lostTopics.isEmpty else { return }
        var lost: [String] = []
        if !lostEnvironments.isEmpty {
            let serves =
                certificate.environments.isEmpty
                ? "no known environment" : certificate.environments.map(\.rawValue).joined(separator: " and ")
            lost.append(
                "it is for \(serves) only, and \(old.alias) also serves \(lostEnvironments.map(\.rawValue).joined(separator: " and "))"
            )
        }
        if !lostTopics.isEmpty {
            lost.append("it does not cover \(lostTopics.joined(separator: ", ")), which \(old.alias) covers")
        }
        throw CredentialError(
            .narrowerCoverage,
            path: file.path,
            "This certificate would replace \(old.alias), but \(lost.joined(separator: "; and ")); nothing changed.",
            hint: "Check that this is the right certificate; to replace it all the same, say so explicitly.",
            alias: old.alias
        )
    }

    // MARK: Token keys' metadata

    /// What `update` changes; nil leaves a value as it is.
    public struct TokenKeyChanges: Sendable {
        public var topics: [String]?
        public var environments: [PushEnvironment]?
        public var teamID: String?

        public init(topics: [String]? = nil, environments: [PushEnvironment]? = nil, teamID: String? = nil) {
            self.topics = topics
            self.environments = environments
            self.teamID = teamID
        }
    }

    /// Changes what a stored token key is recorded to be for: its topics, environments and team.
    /// The key itself (and its Secret Service item) stays as it is. Certificates are refused:
    /// they carry their own topics, environments and team.
    @discardableResult
    public func updateTokenKey(
        alias: String,
        _ changes: TokenKeyChanges
    ) async throws -> (before: StoredCredential, after: StoredCredential) {
        if let teamID = changes.teamID, !ProviderKey.isIdentifier(teamID) {
            throw CredentialError(
                .invalidTeamID,
                "The team ID \"\(teamID)\" is not 10 upper-case letters and digits; nothing changed.",
                hint: "Copy the team ID from the Apple Developer portal (Membership details)."
            )
        }
        for topic in changes.topics ?? [] where topic.isEmpty || topic.contains(where: \.isWhitespace) {
            throw CredentialError(
                .invalidArgument,
                "The topic \"\(topic)\" is not a bundle ID; nothing changed.",
                hint: "Give bundle IDs such as com.example.app."
            )
        }
        return try await withLock { index in
            guard let position = index.credentials.firstIndex(where: { $0.alias == alias }) else {
                throw self.notFound(alias, in: index)
            }
            let before = index.credentials[position]
            guard before.kind == .tokenKey else {
                throw CredentialError(
                    .notATokenKey,
                    "\(alias) is a certificate: its topics, environments and team come from the certificate itself and cannot be edited; nothing changed.",
                    hint: "To change them, import a new certificate as its replacement.",
                    alias: alias
                )
            }
            var after = before
            if let topics = changes.topics {
                var unique: [String] = []
                for topic in topics where !unique.contains(topic) { unique.append(topic) }
                after.topics = unique
            }
            if let environments = changes.environments {
                after.environments = PushEnvironment.allCases.filter(environments.contains)
            }
            if let teamID = changes.teamID { after.teamID = teamID }
            index.credentials[position] = after
            return (before, after)
        }
    }
}
