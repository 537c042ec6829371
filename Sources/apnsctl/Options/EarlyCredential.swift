import CredentialFormats
import Foundation
import PushChecks
import PushStore
import PushTeam
import PushVaultStore

/// The stored credential of `send` and `handshake`, loaded while the argument parser builds the
/// command (the two longest parts of a cold probe's start-up, run side by side instead of one
/// after the other).
///
/// Started from the raw command line before parsing, so it is only a guess: its result is used
/// only when the parsed command names the same credential in the same store and the guess
/// loaded a stored credential. Anything else (a file, which needs its password options; a
/// failure) is loaded again by the command as usual, so messages and exit codes are the
/// command's own.
enum EarlyCredential {

    static let commands: Set<String> = ["send", "handshake"]

    static func begin(_ arguments: [String]) {
        guard arguments.count > 2, commands.contains(arguments[1]) else { return }
        let credential = arguments[2]
        guard !credential.hasPrefix("-"), !CredentialReference.looksLikePath(credential) else { return }
        var explicitStore: String?
        for (index, argument) in arguments.enumerated().dropFirst(3) {
            if argument == "--identity" || argument.hasPrefix("--identity=") { return }  // a team store
            if argument == "--store", index + 1 < arguments.count { explicitStore = arguments[index + 1] }
            if argument.hasPrefix("--store=") { explicitStore = String(argument.dropFirst("--store=".count)) }
        }
        // A store in Vault is read over the network by the command itself.
        let location = explicitStore ?? ProcessInfo.processInfo.environment["APNSCTL_STORE"] ?? ""
        if VaultStore.isVaultLocation(location) { return }
        let root = CredentialStore.defaultRoot(explicit: explicitStore)
        // A team store's secrets are age files, not the Secret Service: nothing to overlap.
        guard !TeamStore.isTeamStore(root) else { return }
        let started = CredentialLoader(store: CredentialStore(root: root)).begin(credential)
        RunContext.current[\.earlyCredential] = started
    }

    /// The early load's credential when it is the one the command asks for, else nil. A Secret
    /// Service that is unavailable or locked is the command's answer too (only a stored
    /// credential asks it): asking it again would double a wait that may be a timeout.
    static func take(_ argument: String, storePath: String) throws -> LoadedCredential? {
        guard
            let started = RunContext.current.with({ state -> PendingCredential? in
                defer { state.earlyCredential = nil }
                return state.earlyCredential
            }), started.argument == argument, started.storePath == storePath
        else { return nil }
        do {
            let loaded = try started.wait()
            return loaded.isStored ? loaded : nil
        } catch let error as CredentialError where CheckJudge.isUnreachable(error) {
            throw error
        } catch {
            return nil
        }
    }
}
