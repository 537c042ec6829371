import ArgumentParser
import CredentialFormats
import Foundation
import PushTeam

struct TeamSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Take in the team's changes and push yours.",
        discussion: """
            Credentials changed on different sides are merged one by one. The same alias changed \
            here and on the remote stops the sync (exit 1) with both versions; run it again with \
            --keep-mine or --keep-theirs for that alias. Nothing is ever force-pushed.

            A change of the member list is taken only when it is signed by a member this clone \
            already trusts; each one taken is listed with its signer. One that is not (unsigned, \
            signed by a removed member or by no member) is named with its commit and author, \
            nothing is encrypted to it, and the sync exits 1; --restore-members commits the \
            trusted list again, signed. Two lists that each follow the same trusted one on \
            different lines of the history (a fork) are both refused, with both commits and \
            signers named; --restore-members is refused then, and a member of both sides keeps \
            one with --resolve-fork COMMIT. A remote whose history was rewritten (it no longer \
            holds the commit this clone last synced) stops the sync before anything is merged. \
            Secrets the head holds encrypted to someone outside the trusted members are named, \
            each with the rotation to run.

            Exit status: 0 in step with the remote; 1 a conflict, an untrusted member list or a \
            rewritten history (nothing was encrypted to an untrusted list); 2 not a team store, \
            the remote could not be reached (commits wait here), or the request was refused (no \
            signing key for --restore-members); 64 usage error.

            Examples:
              apnsctl team sync
              apnsctl team sync --keep-theirs com.example.app-production
              apnsctl team sync --restore-members
            """
    )

    @Option(help: ArgumentHelp("For an alias changed on both sides, keep this clone's version.", valueName: "ALIAS"))
    var keepMine: [String] = []

    @Option(help: ArgumentHelp("For an alias changed on both sides, keep the remote's version.", valueName: "ALIAS"))
    var keepTheirs: [String] = []

    @Flag(help: "Go on although the remote's history was rewritten (nothing of this clone is lost).")
    var acceptRewrite = false

    @Flag(help: "Commit the trusted member list again, signed, over an untrusted one, and push it.")
    var restoreMembers = false

    @Option(
        help: ArgumentHelp(
            "Settle a forked member list with the list of this commit (one of the two sides), signed by you.",
            valueName: "COMMIT"
        )
    )
    var resolveFork: String?

    @OptionGroup var store: StoreOptions

    func validate() throws {
        if let both = Set(keepMine).intersection(keepTheirs).first {
            throw ValidationError("Keep either mine or theirs for \(both), not both.")
        }
        if restoreMembers, resolveFork != nil {
            throw ValidationError("Give --restore-members or --resolve-fork, not both.")
        }
    }

    func run() async throws {
        let team = try await store.teamStore()
        var keep: [String: TeamStore.Side] = [:]
        for alias in keepMine { keep[alias] = .mine }
        for alias in keepTheirs { keep[alias] = .theirs }
        // A conflict, a rewritten history or an untrusted member list is a refusal: exit 1.
        let result = try await withUserErrors {
            try await team.sync(
                TeamStore.SyncOptions(
                    keep: keep,
                    acceptRewrite: acceptRewrite,
                    restoreMembers: restoreMembers,
                    resolveFork: resolveFork
                )
            )
        }
        if result.committedPending { print("Committed changes of the store that no commit held.") }
        if result.pulled > 0 {
            print(
                "Took in \(result.pulled) commit(s) from the remote\(result.merged ? ", merged credential by credential" : "")."
            )
        }
        for change in result.acceptedMembers { print(TeamWording.accepted(change)) }
        if result.reencrypted > 0 {
            print(
                "Encrypted \(result.reencrypted) secret(s) again to the \(result.settledFork == nil ? "merged" : "settled") member list."
            )
        }
        if let restored = result.restoredMembers {
            print(
                "Committed the trusted member list again, signed by you: \(restored.map(\.name).joined(separator: ", "))."
            )
        }
        if let settled = result.settledFork {
            print(
                "Settled the forked member list with the list of commit \(settled.commit.prefix(12)), signed by you "
                    + "as version \(settled.version): \(settled.members.map(\.name).joined(separator: ", "))."
            )
        }
        if result.pushed > 0 { print("Pushed \(result.pushed) commit(s).") }
        if let why = result.notPushed {
            print(
                "Not pushed: \(why). \(result.waiting) commit(s) wait here; run `apnsctl team sync\(store.storeSuffix)` again later."
            )
            throw ExitStatus.couldNotCheck
        }
        if result.pulled == 0, result.pushed == 0, result.restoredMembers == nil, result.settledFork == nil {
            print("Up to date with the remote.")
        }
        if !result.exposed.isEmpty { printError(TeamWording.exposed(result.exposed, store: store)) }
        if let untrusted = result.untrustedMembers {
            printError(
                TeamWording.untrusted(untrusted, trusted: (try? await team.status())?.trustedMembers, store: store)
            )
            throw ExitStatus.problem
        }
    }
}

struct TeamStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the team store's remote, members, ahead/behind and your recipient.",
        discussion: """
            Shown whether or not the remote can be reached, and with an untrusted member list \
            named, not failed on: `apnsctl team sync` settles those.

            Exit status: 0 shown; 2 not a team store, or it could not be read; 64 usage error.

            Examples:
              apnsctl team status
            """
    )

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let team = try await store.teamStore()
        try await withUserErrors {
            let status = try await team.status()
            print("remote:     \(status.remote ?? "none") (branch \(status.branch))")
            print(
                "sync:       "
                    + (status.remoteReachable ? "" : "remote not reachable; as of the last fetch: ")
                    + "\(status.ahead) commit(s) to push, \(status.behind) to take in"
                    + (status.uncommitted ? "; uncommitted changes in the folder" : "")
            )
            print("you:        \(status.member ?? "unknown") (identity: \(status.identitySource))")
            print("recipient:  \(status.recipient ?? "unknown")")
            print(
                "access:     "
                    + (status.isMember
                        ? "a member: the secrets are encrypted to you"
                        : status.removedIn.map {
                            "removed from the team (\(Untrusted.display($0))): metadata only; the secrets are no longer encrypted to you"
                        }
                            ?? "not a member yet: metadata only (a member runs `apnsctl team add NAME RECIPIENT`)")
            )
            print(
                "signing:    "
                    + (status.signingKey.map { "your key \($0)" }
                        ?? "no signing key here: you can read, not change the members")
            )
            print("members:    (trusted: secrets are encrypted to these)")
            for member in status.trustedMembers ?? status.members {
                print("  " + TeamWording.member(member) + (member.addedBy.map { "  (added by \($0))" } ?? ""))
            }
            if let untrusted = status.untrustedMembers {
                print("")
                print(TeamWording.untrusted(untrusted, trusted: status.trustedMembers, store: store))
            }
        }
    }
}
