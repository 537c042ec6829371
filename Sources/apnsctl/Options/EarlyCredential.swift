import CredentialFormats
import Foundation
import PushChecks
import PushCore
import PushGateway
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

    static func begin(_ arguments: [String]) {
        // Compared as strings: a Set here would cost the parser's thread its first Set<String>.
        guard arguments.count > 2, arguments[1] == "send" || arguments[1] == "handshake" else { return }
        // The connection's shared parts (event loops, the TLS library) are made ready beside
        // the parser too: nothing of them depends on the command's options.
        GatewayConnection.warmUp()
        let credential = arguments[2]
        guard !credential.hasPrefix("-"), !CredentialReference.looksLikePath(credential) else { return }
        var explicitStore: String?
        for (index, argument) in arguments.enumerated().dropFirst(3) {
            if argument == "--identity" || argument.hasPrefix("--identity=") { return }  // a team store
            if argument == "--store", index + 1 < arguments.count { explicitStore = arguments[index + 1] }
            if argument.hasPrefix("--store=") { explicitStore = String(argument.dropFirst("--store=".count)) }
        }
        // Which store it is, and the start of the load, are found on a thread of their own as
        // well: the parser's thread is the longest of a cold probe's start-up.
        let started = Once<PendingCredential?>()
        RunContext.current[\.earlyCredential] = started
        let store = explicitStore
        Thread.detachNewThread {
            started.complete(load(credential, explicitStore: store, arguments: arguments))
        }
    }

    private static func load(
        _ credential: String,
        explicitStore: String?,
        arguments: [String]
    ) -> PendingCredential? {
        // A store in Vault is read over the network by the command itself.
        let location = explicitStore ?? ProcessEnvironment.value("APNSCTL_STORE") ?? ""
        let root = CredentialStore.defaultRoot(explicit: explicitStore)
        // A team store's secrets are age files, not the Secret Service: nothing to overlap.
        guard !VaultStore.isVaultLocation(location), !TeamStore.isTeamStore(root) else { return nil }
        let store = CredentialStore(root: root)
        // The load first, on its own thread, with the Secret Service's connection and key
        // exchange on another: they wait on the daemon longest, and the secret is what the
        // request waits for last. Setting the connection up here first (its configuration, its
        // TLS context) held the index's read and the secret's request back by some milliseconds
        // on a two-core machine.
        let pending = CredentialLoader(store: store).begin(credential)
        // The connection `send` asks for (nil for another command or kind of connection). A
        // gateway named on the command line needs nothing from the store to be connected to:
        // the connection starts beside the index's read, not after it.
        if let guess = EarlyConnection.guess(arguments) {
            let connecting = EarlyConnection.beginFromCommandLine(guess)
            // The stored key's kind says whether a connection can be made before its secret is
            // read, and its environment which gateway that is, unless the command line named it.
            EarlyConnection.settle(guess, startedEarly: connecting, stored: try? store.credential(named: credential))
        }
        return pending
    }

    /// The early load's credential when it is the one the command asks for, else nil. A Secret
    /// Service that is unavailable or locked is the command's answer too (only a stored
    /// credential asks it): asking it again would double a wait that may be a timeout.
    static func take(_ argument: String, storePath: String) throws -> LoadedCredential? {
        guard
            let early = RunContext.current.with({ state -> Once<PendingCredential?>? in
                defer { state.earlyCredential = nil }
                return state.earlyCredential
            }), let started = wait(for: early), started.argument == argument, started.storePath == storePath
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

    private static func wait(for early: Once<PendingCredential?>) -> PendingCredential? {
        let done = DispatchSemaphore(value: 0)
        early.whenComplete { _ in done.signal() }
        done.wait()
        return early.value { nil }
    }
}
