import ArgumentParser
import Foundation
import PushCredentials

struct TeamSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Take in the team's changes and push yours.",
        discussion: """
            Credentials changed on different sides are merged one by one. The same alias changed \
            here and on the remote stops the sync (exit 1) with both versions; run it again with \
            --keep-mine or --keep-theirs for that alias. Nothing is ever force-pushed.

            Examples:
              apnsctl team sync
              apnsctl team sync --keep-theirs com.example.app-production
            """
    )

    @Option(
        name: .customLong("keep-mine"),
        help: ArgumentHelp("For an alias changed on both sides, keep this clone's version.", valueName: "ALIAS")
    )
    var keepMine: [String] = []

    @Option(
        name: .customLong("keep-theirs"),
        help: ArgumentHelp("For an alias changed on both sides, keep the remote's version.", valueName: "ALIAS")
    )
    var keepTheirs: [String] = []

    @OptionGroup var store: StoreOptions

    func validate() throws {
        if let both = Set(keepMine).intersection(keepTheirs).first {
            throw ValidationError("Keep either mine or theirs for \(both), not both.")
        }
    }

    func run() async throws {
        let team = try store.teamStore()
        var keep: [String: TeamStore.Side] = [:]
        for alias in keepMine { keep[alias] = .mine }
        for alias in keepTheirs { keep[alias] = .theirs }
        let result: TeamStore.SyncResult
        do {
            result = try team.sync(keep: keep)
        } catch let error as CredentialError where error.code == .teamConflict {
            reportError(error)
            throw ExitStatus.problem
        } catch let error as CredentialError {
            reportError(error)
            throw ExitStatus.couldNotCheck
        }
        if result.committedPending { print("Committed changes of the store that no commit held.") }
        if result.pulled > 0 {
            print(
                "Took in \(result.pulled) commit(s) from the remote\(result.merged ? ", merged credential by credential" : "")."
            )
        }
        if result.reencrypted > 0 {
            print("Encrypted \(result.reencrypted) secret(s) again to the merged member list.")
        }
        if result.pushed > 0 { print("Pushed \(result.pushed) commit(s).") }
        if let why = result.notPushed {
            print(
                "Not pushed: \(why). \(result.waiting) commit(s) wait here; run `apnsctl team sync\(store.storeSuffix)` again later."
            )
            throw ExitStatus.couldNotCheck
        }
        if result.pulled == 0, result.pushed == 0 { print("Up to date with the remote.") }
    }
}

struct TeamStatus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the team store's remote, members, ahead/behind and your recipient.",
        discussion: """
            Examples:
              apnsctl team status
            """
    )

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let team = try store.teamStore()
        try await withUserErrors {
            let status = try team.status()
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
                        : "not a member yet: metadata only (a member runs `apnsctl team add NAME RECIPIENT`)")
            )
            print("members:")
            for member in status.members {
                print("  \(member.name)  \(member.recipient)" + (member.addedBy.map { "  (added by \($0))" } ?? ""))
            }
        }
    }
}
