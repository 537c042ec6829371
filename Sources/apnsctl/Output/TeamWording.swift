import Foundation
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
}
