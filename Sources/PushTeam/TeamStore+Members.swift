import CredentialFormats
import Foundation
import PushStore

extension TeamStore {
    public struct MemberChange: Sendable {
        public var member: TeamFile.Member
        /// Secrets encrypted again to the new member set.
        public var reencrypted: Int
        public var members: [TeamFile.Member]
        /// What became of the commit.
        public var published: TeamPublication
        /// Removal: the credentials whose secrets the removed member could read, and so may have kept.
        public var exposed: [StoredCredential] = []
    }

    /// Adds a member: every secret is encrypted again to the members and the new recipient. The
    /// new list is signed with this member's signing key; `signingKey` is the new member's own
    /// (none for a member that only reads, such as CI).
    public func add(name: String, recipient: String, signingKey: SigningPublicKey? = nil) async throws -> MemberChange {
        try TeamFile.validateName(name)
        let recipient = recipient.trimmed
        try await age.validate(recipient: recipient)
        return try await changeMembers(verb: "Add") { team in
            if let existing = team.member(named: name) {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "The team already has a member named \(name) (\(existing.recipient)).",
                    hint: "Choose another name, or remove \(name) first."
                )
            }
            if let existing = team.members.first(where: { $0.recipient == recipient }) {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "That recipient is already the team's member \(existing.name).",
                    hint: "Each member has an identity of their own."
                )
            }
            if let signingKey, let existing = team.member(signingWith: signingKey) {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "That signing key is already the team's member \(existing.name)'s.",
                    hint: "Each member has a signing key of their own."
                )
            }
            let member = TeamFile.Member(
                name: name,
                recipient: recipient,
                signingKey: signingKey,
                addedAt: Date(),
                addedBy: await self.memberName
            )
            team.members.append(member)
            return member
        }
    }

    /// Removes a member: every secret is encrypted again without them. What they could read before
    /// stays readable to them in the repository's history and in any copy they made, so the
    /// credentials are returned for rotation.
    public func remove(name: String) async throws -> MemberChange {
        var change = try await changeMembers(verb: "Remove") { team in
            guard let member = team.member(named: name) else {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "The team has no member named \(name).",
                    hint: "The members: \(team.members.map(\.name).joined(separator: ", "))."
                )
            }
            if await self.memberName.map({ TeamFile.sameName($0, name) }) == true {
                throw CredentialError(
                    .teamError,
                    path: nil,
                    "You cannot remove yourself: the secrets are encrypted again by someone who stays.",
                    hint: "Ask another member to remove you."
                )
            }
            guard team.members.count > 1 else {
                throw CredentialError(.teamError, path: nil, "\(name) is the team's last member.", hint: nil)
            }
            team.members.removeAll { $0.name == member.name }
            return member
        }
        change.exposed = (try? await credentialStore().list()) ?? []
        return change
    }

    var memberName: String? {
        get async { await git.config("apnsctl.member") }
    }

    /// Changes the trusted member list, signs it with this member's key and encrypts every secret
    /// again to it, under the store's lock, then commits and pushes. The member list is written
    /// last, so that an interruption leaves secrets encrypted to both sets and a list that still
    /// names the old one.
    private func changeMembers(
        verb: String,
        _ edit: (inout TeamFile) async throws -> TeamFile.Member
    ) async throws -> MemberChange {
        try await TeamStore.withPrivateFiles {
            let key = try await signingKey()
            try await syncBeforeChange()
            // The list, the secrets and the commit under the store's lock; the push after it.
            let (member, team, count, subject) = try await withStoreLock {
                () async throws -> (TeamFile.Member, TeamFile, Int, String) in
                var team = try await trust.trustedTeam()
                let member = try await edit(&team)
                let onDisk = (try? TeamFile.read(root: root))?.version ?? 0
                team.version = max(team.version ?? 0, onDisk) + 1
                if let problem = team.problems.first {
                    throw CredentialError(.invalidArgument, path: nil, "The new member list is not usable: \(problem).")
                }
                // Nothing is encrypted again or signed while the folder holds what the commit would refuse.
                try await TeamStaging(git: git).check()
                let count = try await secrets.reencryptAll(to: team.recipients)
                var list = try writeSigned(team, with: key)
                let subject = "\(verb) member \(member.name)"
                try await git.commitAll(
                    "\(subject)\n\n\(count) secret(s) encrypted again to \(team.members.count) member(s): "
                        + team.members.map(\.name).joined(separator: ", ") + "\nRecipient: \(member.recipient)"
                        + (member.signingKey.map { "\nSigning key: \($0.fingerprint)" } ?? "")
                        + "\nSigned by: \(await memberName ?? "?") (\(key.publicKey.fingerprint))"
                )
                list.commit = await git.revision("HEAD")
                try trust.trust(list)
                return (member, team, count, subject)
            }
            return MemberChange(
                member: member,
                reencrypted: count,
                members: team.members,
                published: await publish(committed: subject)
            )
        }
    }

    /// Takes in the remote's changes first when it can be reached, so that a member change is made
    /// on top of them; offline it goes ahead and the sync after merges.
    private func syncBeforeChange() async throws {
        guard await git.remoteURL != nil, (try? await git.run(["fetch", "--quiet", "origin"]))?.succeeded == true else {
            return
        }
        // An untrusted member list pushed by someone else does not stop a signed change: the
        // change is made to the trusted list, and its signed version supersedes the other.
        _ = try await sync()
    }
}
