import Foundation
import PushStore
import PushTeam

/// How the team commands word members and membership changes.
enum TeamWording {
    /// `alice  age1…  signing SHA256:…`
    static func member(_ member: TeamFile.Member) -> String {
        "\(member.name)  \(member.recipient)  "
            + (member.signingKey.map { "signing key \($0.fingerprint)" } ?? "no signing key (reads only)")
    }

    static func difference(_ difference: MemberDifference) -> String {
        var parts: [String] = []
        for member in difference.added {
            parts.append(
                "adds \(member.name) (\(member.recipient)"
                    + (member.signingKey.map { ", signing key \($0.fingerprint)" } ?? "") + ")"
            )
        }
        for member in difference.removed { parts.append("removes \(member.name)") }
        for member in difference.replaced {
            parts.append(
                "replaces \(member.name)'s recipient or key with \(member.recipient)"
                    + (member.signingKey.map { ", signing key \($0.fingerprint)" } ?? "")
            )
        }
        return parts.isEmpty ? "changes no member" : parts.joined(separator: "; ")
    }

    static func accepted(_ change: AcceptedMembershipChange) -> String {
        let commit = change.commit.map { " in commit \($0.prefix(12))" } ?? ""
        let signer = change.signer.signingKey.map { " (\($0.fingerprint))" } ?? ""
        return
            "Member list changed\(commit), signed by \(change.signer.name)\(signer): \(difference(change.difference))."
    }

    static func untrusted(_ untrusted: UntrustedMembership, trusted: [TeamFile.Member]?, store: StoreOptions) -> String
    {
        if let fork = untrusted.fork { return forked(fork, trusted: trusted, store: store) }
        let commit = untrusted.commit.map { "commit \($0.prefix(12))" } ?? "the working tree"
        let author = untrusted.author.map { " by \($0)" } ?? ""
        var lines = [
            "The member list of \(commit)\(author) is not trusted: \(untrusted.reason).",
            "It \(difference(untrusted.difference)).",
        ]
        if let trusted {
            lines.append(
                "Nothing was encrypted to it: secrets stay encrypted to the trusted members "
                    + trusted.map(\.name).joined(separator: ", ") + "."
            )
        }
        lines.append(
            "To put the trusted list back, signed by you: apnsctl team sync --restore-members\(store.storeSuffix)"
        )
        return lines.joined(separator: "\n")
    }

    /// A forked member list: both sides with their signers, what is kept, and who may settle it.
    /// `--restore-members` is never offered: it would sign this clone's list over a side unseen.
    static func forked(_ fork: MembershipFork, trusted: [TeamFile.Member]?, store: StoreOptions) -> String {
        var lines = [
            "The member list is forked: two lists each follow version \(fork.baseVersion.map { String($0) } ?? "?") "
                + "on a different line of the history. Neither is taken."
        ]
        for side in fork.sides {
            lines.append(
                "  commit \(side.commit.map { String($0.prefix(12)) } ?? "?"), version \(side.version.map { String($0) } ?? "?"), "
                    + "signed by \(side.signer)\(side.fingerprint.map { " (\($0))" } ?? ""): \(difference(side.difference))"
                    + (side.refusal.map { "; never taken: \($0)" } ?? "")
            )
        }
        if let trusted {
            lines.append(
                "Secrets stay encrypted to the trusted members " + trusted.map(\.name).joined(separator: ", ") + "."
            )
        }
        let keepable = fork.sides.filter { $0.refusal == nil }.compactMap(\.commit)
        if !keepable.isEmpty {
            lines.append(
                "Do not sign your own list over both (restoring it is refused while the list is forked). Ask the signers which "
                    + "change is real; a member of both sides ("
                    + (fork.settlers.isEmpty ? "none" : fork.settlers.joined(separator: ", ")) + ") then keeps it:"
            )
            for commit in keepable {
                lines.append("  apnsctl team sync --resolve-fork \(commit.prefix(12))\(store.storeSuffix)")
            }
        } else if let commit = fork.resignable {
            lines.append(
                "Neither side can be taken: each is signed by a member the other side removed. This clone keeps the list "
                    + "of commit \(commit.prefix(12)); if its removal is real, a member of it signs it again as a new version:"
            )
            lines.append("  apnsctl team sync --resolve-fork \(commit.prefix(12))\(store.storeSuffix)")
        } else {
            lines.append(TeamStore.noSideHint(fork))
        }
        return lines.joined(separator: "\n")
    }

    /// Credentials whose secrets were written for people outside the trusted list.
    static func exposed(_ exposed: [TeamStore.ExposedCredential], store: StoreOptions) -> String {
        var lines = ["These secrets were encrypted to people outside the trusted members; rotate each one:"]
        for item in exposed {
            lines.append(
                "  (written in commit \(item.commit.prefix(12)) for \(item.outsiders.joined(separator: ", "))) "
                    + rotation(item.credential, store: store)
            )
        }
        return lines.joined(separator: "\n")
    }

    /// How to rotate one credential: revoke it at Apple, then import the new one over it.
    static func rotation(_ credential: StoredCredential, store: StoreOptions) -> String {
        switch credential.kind {
        case .certificate:
            return "\(credential.alias): revoke the certificate in the Apple Developer portal, make a new one, then "
                + "`apnsctl import NEW.p12 --password-stdin --replace \(ErrorHints.shellQuoted(credential.alias))\(store.storeSuffix)`"
        case .tokenKey:
            // The import keeps these by itself; they are spelled out so that the command says
            // what the new key will serve.
            let serves =
                credential.topics.map { " --topic \(ErrorHints.shellQuoted($0))" }.joined()
                + (EnvironmentScope(credential.environments).map { " --environment \($0.rawValue)" } ?? "")
            return
                "\(credential.alias): revoke key \(credential.keyID ?? "") in the Apple Developer portal, make a new one, then "
                + "`apnsctl import AuthKey_NEWKEYID.p8 --team-id \(credential.teamID ?? "TEAMID")\(serves) --replace \(ErrorHints.shellQuoted(credential.alias))\(store.storeSuffix)`"
        }
    }
}
