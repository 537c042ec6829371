import CredentialFormats
import Foundation
import PushStore

extension TeamStore {
    /// A credential whose secret, as HEAD holds it, was written when the member list named people
    /// the trusted list does not: they may have read it, so it is to be rotated.
    public struct ExposedCredential: Sendable {
        public var credential: StoredCredential
        /// The names of the people outside the trusted list it was encrypted to.
        public var outsiders: [String]
        /// The commit that wrote the secret as HEAD holds it.
        public var commit: String
    }

    /// The side of a fork `team sync --resolve-fork` signed again, as a new version.
    public struct SettledFork: Sendable {
        public var commit: String
        public var members: [TeamFile.Member]
        public var version: Int
    }

    /// Settles a forked member list: the list of the side `commit` names is signed again by this
    /// member, numbered above both sides, every secret is encrypted again to it, and it is
    /// committed. Only a member of both sides may, and never for a side signed by a member the
    /// other side removed.
    func settleFork(_ fork: MembershipFork?, choosing commit: String, into result: inout SyncResult) async throws {
        guard let fork else {
            throw CredentialError(
                .invalidArgument,
                path: nil,
                "The member list is not forked here: there is no side to keep.",
                hint: "Run the sync again without naming a side."
            )
        }
        let named = commit.lowercased()
        let commits = fork.sides.compactMap(\.commit)
        guard named.count >= 7, let side = fork.sides.first(where: { $0.commit?.hasPrefix(named) == true }) else {
            throw CredentialError(
                .invalidArgument,
                path: nil,
                "\(commit) is not one of the two forked member lists (commits "
                    + commits.map { String($0.prefix(12)) }.joined(separator: " and ") + ").",
                hint: "Name one of those commits.",
                remedy: .forkResolved(commits: commits.map { String($0.prefix(12)) })
            )
        }
        // Neither side can be taken: a member of the list this clone keeps signs it again.
        let resigning = side.commit != nil && side.commit == fork.resignable
        if let refusal = side.refusal, !resigning {
            let other = fork.sides.first { $0.refusal == nil && $0.commit != side.commit }?.commit?.prefix(12)
            throw CredentialError(
                .untrustedMembers,
                path: nil,
                "The member list of commit \(commit) cannot be kept: \(refusal).",
                hint: other.map { "Keep the other side's list instead (commit \($0)), after asking its signer." }
                    ?? Self.noSideHint(fork),
                remedy: other.map { .forkResolved(commits: [String($0)]) }
            )
        }
        let signers = resigning ? side.members.filter { $0.signingKey != nil }.map(\.name) : fork.settlers
        guard let me = await memberName, signers.contains(me) else {
            throw CredentialError(
                .untrustedMembers,
                path: nil,
                (resigning
                    ? "Only a member of the list of commit \(commit) can sign it again ("
                    : "Only a member of both sides of the fork can settle it (")
                    + (signers.isEmpty ? "none is" : signers.joined(separator: ", ")) + ").",
                hint: "Ask one of them to run the same command."
            )
        }
        let key = try await signingKey()
        let trusted = try await trust.trustedTeam()
        let onDisk = (try? TeamFile.read(root: root))?.version ?? 0
        let version = ([onDisk, trusted.version ?? 0] + fork.sides.map { $0.version ?? 0 }).max()! + 1
        let team = TeamFile(teamID: trusted.teamID, version: version, members: side.members)
        result.exposed = await exposedCredentials(trusted: team)
        result.reencrypted += try await secrets.reencryptAll(to: team.recipients)
        var list = try writeSigned(team, with: key)
        try await git.commitAll(
            "Settle the forked member list with the list of commit \(side.commit?.prefix(12) ?? "?")\n\n"
                + "Signed by \(me) (\(key.publicKey.fingerprint)), version \(version): "
                + team.members.map(\.name).joined(separator: ", ") + "\nForked lists: "
                + commits.map { String($0.prefix(12)) }.joined(separator: ", ")
        )
        list.commit = await git.revision("HEAD")
        try trust.trust(list)
        result.settledFork = SettledFork(commit: side.commit ?? "", members: team.members, version: version)
        result.untrustedMembers = nil
    }

    /// How a forked list is settled, for a refusal to restore the list while forked: in words,
    /// and the commits that may be kept as a remedy.
    static func forkAdvice(_ fork: MembershipFork) -> (hint: String, remedy: Remedy?) {
        let keepable = fork.sides.filter { $0.refusal == nil }.compactMap { $0.commit?.prefix(12) }.map(String.init)
        if !keepable.isEmpty {
            return (
                "Ask who signed each side which is real; then a member of both sides ("
                    + (fork.settlers.isEmpty ? "none" : fork.settlers.joined(separator: ", "))
                    + ") runs the sync again keeping that side's commit (" + keepable.joined(separator: " or ") + ").",
                .forkResolved(commits: keepable)
            )
        }
        if let commit = fork.resignable?.prefix(12) {
            return (
                "Neither side can be taken: each is signed by a member the other side removed. This clone keeps "
                    + "the list of commit \(commit); if its removal is real, a member of it runs the sync "
                    + "again keeping \(commit), which signs it again as a new version.",
                .forkResolved(commits: [String(commit)])
            )
        }
        return (noSideHint(fork), nil)
    }

    /// What to do when neither side of `fork` can be taken and this clone keeps neither: the
    /// clone of a member of the side whose removal is real keeps that side and can sign it again.
    public static func noSideHint(_ fork: MembershipFork) -> String {
        "Neither side can be taken: each is signed by a member the other side removed. Ask the signers ("
            + fork.sides.map(\.signer).joined(separator: ", ")
            + ") which removal is real; that member runs the sync in their own clone, which keeps their "
            + "list and names the commit that settles the fork there."
    }

    /// The credentials whose secret files, as HEAD holds them, were last written by a commit whose
    /// member list names someone `trusted` does not. age's X25519 stanzas do not name their
    /// recipient, so the list is judged by the history: apnsctl encrypts to the list a clone
    /// trusts, which is the list committed with the secret or an older one; a secret written under
    /// a list that named an outsider is taken as readable by them (this may name a credential
    /// that was in fact encrypted to fewer people). For the files this clone wrote, what it
    /// recorded (``WrittenRecipients``) is used instead: it is exact.
    func exposedCredentials(trusted: TeamFile) async -> [ExposedCredential] {
        guard
            // A merge names the files it wrote itself (those unlike every parent's), not those it
            // took from one side: `git log` lists none for a merge by default.
            let log = try? await git.run([
                "log", "--format=%x01%H", "--name-only", "--diff-merges=combined", "HEAD", "--",
                TeamSecretStore.folder,
            ]),
            log.succeeded
        else { return [] }
        var lastWriter: [String: String] = [:]
        var commit = ""
        for line in log.output.split(separator: "\n").map(String.init) {
            if line.hasPrefix("\u{1}") {
                commit = String(line.dropFirst())
            } else if !line.isEmpty, lastWriter[line] == nil {
                lastWriter[line] = commit
            }
        }
        let recipients = Set(trusted.recipients)
        let written = WrittenRecipients(root: root).load()
        var lists: [String: TeamFile?] = [:]
        var exposed: [ExposedCredential] = []
        for credential in (try? await credentialStore().list()) ?? [] {
            let file = TeamSecretStore.relativePath(of: credential.secretItem(store: root.path))
            guard let writer = lastWriter[file] else { continue }
            if lists[writer] == nil {
                lists[writer] = await git.show(writer, TeamFile.fileName).flatMap { try? TeamFile.decode([UInt8]($0)) }
            }
            let members = (lists[writer] ?? nil)?.members ?? []
            var outsiders = members.filter { !recipients.contains($0.recipient) }.map(\.name)
            // Written by this clone: what it was encrypted to is known exactly.
            if let bytes = try? StoreFile.readIfPresent(root: root, relative: file, kind: .encryptedSecret),
                let recorded = written[WrittenRecipients.key(of: bytes)]
            {
                outsiders = recorded.filter { !recipients.contains($0) }.map { recipient in
                    members.first { $0.recipient == recipient }?.name ?? "the recipient \(recipient.prefix(16))…"
                }
            }
            if !outsiders.isEmpty {
                exposed.append(ExposedCredential(credential: credential, outsiders: outsiders, commit: writer))
            }
        }
        return exposed
    }
}
