import ArgumentParser
import Foundation
import PushGateway
import PushStore

@main
struct APNSCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apnsctl",
        abstract: "Inspect, store, check and test Apple push notification (APNs) credentials.",
        discussion: """
            Exit status: 0 all good; 1 checked and found a problem (expired, expiring within the \
            warning window, key mismatch, environment or topic mismatch, APNs rejected the \
            notification), or a valid request refused because it would lose or weaken something, \
            with nothing changed (already stored, alias taken, a rotation that would expire sooner \
            or serve less, an output file that exists, an untrusted team member list); 2 could not \
            check (unreadable input, wrong password, network, TLS or proxy failure, Secret Service \
            unavailable, a credential or file that is not there); 64 usage error; 130 a bulk send \
            interrupted. Each command's --help says which of these it returns, and when.

            Human output is the default; --json gives a versioned machine-readable report. Colour \
            is used only on a terminal and never when NO_COLOR is set.
            """,
        version: APNSCtlVersion.text,
        subcommands: [
            Inspect.self, Request.self, Import.self, Update.self, List.self, Check.self, Export.self, Remove.self,
            Handshake.self, Send.self, Channels.self, Trust.self,
            Preflight.self, Gateway.self, Exporter.self, Team.self, Store.self, Results.self,
        ]
    )

    /// Prints --help, --version or a completion script as every command prints its output, so
    /// that a write that fails is exit 2 here too (the argument parser's own printing ignores
    /// write errors).
    static func exitCleanly(_ error: any Error) -> Never {
        let text = fullMessage(for: error)
        if !text.isEmpty { print(text) }
        if let reason = StandardOutput.failure {
            reportError(CommandLineError.standardOutputFailed(reason))
            exit(withError: ExitStatus.couldNotCheck)
        }
        exit(withError: ExitStatus.ok)
    }

    /// `send`'s command line parsed by the argument parser as `send` alone, without the tree of
    /// every command around it (a cold probe's parsing is its longest step, docs/performance.md).
    /// Only a success is used: anything else (help, a usage error) is parsed again from the top,
    /// so that every message, usage line and exit status is the whole tree's.
    nonisolated static func parseSendAlone() throws -> ParsableCommand? {
        let arguments = CommandLine.arguments
        guard arguments.count > 2, arguments[1] == "send" else { return nil }
        let sendArguments = Array(arguments.dropFirst(2))
        do {
            return try Send.parse(sendArguments)
        } catch let error where Send.fullMessage(for: error).isEmpty && Send.exitCode(for: error) != .success {
            // A failure without words was reported by the check that threw it (the store
            // option's, for a folder that is not a store): parsed again, it would be reported twice.
            throw error
        } catch {
            return nil
        }
    }

    static func main() async {
        // A write past a file-size limit (ulimit -f) must fail with EFBIG, which is reported, not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        // Everything apnsctl and its children (git) create is the user's alone, whatever the
        // umask; a file meant for others (a metrics textfile) sets its mode itself.
        umask(0o077)
        // Passwords and private keys live in this process's memory: no core dump may hold them.
        ProcessProtection.protectSecretsInMemory()
        // The arguments' own bytes, for a path that is not UTF-8 (Swift's Strings repair it).
        RawPath.use(
            arguments: (0..<Int(CommandLine.argc)).compactMap { index in
                CommandLine.unsafeArgv[index].map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))) }
            }.map { $0.map { UInt8(bitPattern: $0) } }
        )
        var failure: (any Error)?
        JSONFailure.requested = JSONFailure.asksForJSON(CommandLine.arguments)
        // Before parsing: the connection's shared parts (event loops, the TLS library) depend on
        // no option, so they are made ready beside the argument parser's reflection.
        let arguments = CommandLine.arguments
        if arguments.count > 1, arguments[1] == "send" || arguments[1] == "handshake" { GatewayConnection.warmUp() }
        var parsed: ParsableCommand
        do {
            if let alone = try parseSendAlone() { parsed = alone } else { parsed = try parseAsRoot(nil) }
        } catch {
            // Everything refused before a command runs (its options' own validation included)
            // is a usage error: 64, as the argument parser gives its own refusals.
            if exitCode(for: error) == .failure {
                let message = fullMessage(for: error)
                JSONFailure.note(CommandLineError.usage(message))
                printError(message)
                JSONFailure.finish()
                exit(withError: ExitCode(64))
            }
            if exitCode(for: error).rawValue != 0 {
                JSONFailure.note(CommandLineError.usage(fullMessage(for: error)))
                JSONFailure.finish()
            } else {
                exitCleanly(error)
            }
            exit(withError: error)
        }
        do {
            var command = parsed
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            failure = error
        }
        if let reason = StandardOutput.failure {
            // Output that did not reach its destination is a failure whatever the command found.
            reportError(CommandLineError.standardOutputFailed(reason))
            exit(withError: ExitStatus.couldNotCheck)
        }
        if failure == nil, RunContext.current[\.teamChangeNotCommitted] {
            // Said on stderr already (teamNote): the change waits in the folder for a sync.
            exit(withError: ExitStatus.couldNotCheck)
        }
        guard let failure else { return }
        // `apnsctl help COMMAND` ends as --help does.
        if !(failure is ExitCode), exitCode(for: failure) == .success { exitCleanly(failure) }
        // A library error that no command turned into its own message still gets one, with
        // the command line's hint and its exit status, never a bare description and status 1.
        let status = reportLibraryError(failure)
        // A usage error found by a command's run() (a ValidationError) is a usage error under --json too.
        if status == nil, !(failure is ExitCode), exitCode(for: failure).rawValue == 64 {
            JSONFailure.note(CommandLineError.usage(fullMessage(for: failure)))
        }
        if (status ?? failure as? ExitCode)?.rawValue != 0 { JSONFailure.finish() }
        if let status { exit(withError: status) }
        exit(withError: failure)
    }
}
