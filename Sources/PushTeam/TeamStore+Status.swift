import CredentialFormats
import Foundation
import PushStore

extension TeamStore {
    public struct Status: Sendable {
        public var remote: String?
        public var branch: String
        public var members: [TeamFile.Member]
        public var member: String?
        public var recipient: String?
        public var identitySource: String
        /// Whether this clone's recipient is among the members (so it can read the secrets).
        public var isMember: Bool
        public var remoteReachable: Bool
        public var ahead: Int
        public var behind: Int
        public var uncommitted: Bool
        /// The member list this clone trusts (and encrypts to); nil when none can be.
        public var trustedMembers: [TeamFile.Member]?
        /// A member list in the clone or on the remote that is not trusted.
        public var untrustedMembers: UntrustedMembership?
        /// This member's signing key, when this clone has one.
        public var signingKey: String?
        /// When this clone's recipient is not a member but was one: the commit that removed it
        /// (abbreviated hash, author and subject).
        public var removedIn: String?
    }

    /// Where the clone stands: fetches first when the remote can be reached.
    public func status() async throws -> Status {
        // The trusted list when the working tree's cannot be read (a bad push): status still answers.
        var readable = try? members()
        if readable == nil { readable = try? await trust.trustedTeam() }
        guard let team = readable else { return try statusError() }
        let reachable = (try? await git.run(["fetch", "--quiet", "origin"]))?.succeeded ?? false
        let branch = await git.branch
        let counts = (try? await git.aheadBehind(upstream: "origin/\(branch)")) ?? (0, 0)
        let recipient = await ownRecipient()
        let here = try? await trust.evaluate(at: "HEAD")
        let remote =
            await git.revision("origin/\(branch)") != nil ? try? await trust.evaluate(at: "origin/\(branch)") : nil
        let trusted = (try? await trust.trustedTeam())?.members
        return Status(
            remote: await git.remoteURL,
            branch: branch,
            members: team.members,
            member: await memberName ?? recipient.flatMap { own in team.members.first { $0.recipient == own }?.name },
            recipient: recipient,
            identitySource: identity.describes,
            isMember: recipient.map { own in (trusted ?? team.members).contains { $0.recipient == own } } ?? false,
            remoteReachable: reachable,
            ahead: counts.0,
            behind: counts.1,
            uncommitted: (try? await git.hasChanges()) ?? false,
            trustedMembers: trusted,
            untrustedMembers: here?.pending ?? remote?.pending,
            signingKey: await git.config("apnsctl.signing-key"),
            removedIn: await removal(of: recipient, among: trusted ?? team.members)
        )
    }

    /// The last commit that changed team.json's mention of `recipient`, when it is no longer a
    /// member: a removed member is told so, not that it was never added.
    private func removal(of recipient: String?, among members: [TeamFile.Member]) async -> String? {
        guard let recipient, !members.contains(where: { $0.recipient == recipient }),
            let log = try? await git.run([
                "log", "-1", "--format=%h by %an: %s", "-S" + recipient, "--", TeamFile.fileName,
            ]),
            log.succeeded
        else { return nil }
        let line = String(decoding: log.stdout, as: UTF8.self).trimmed
        return line.isEmpty ? nil : line
    }

    /// The reason the member list cannot be read, thrown.
    private func statusError() throws -> Status {
        _ = try members()
        throw CredentialError(.teamError, path: TeamFile.fileName, "The team's member list cannot be read.")
    }
}
