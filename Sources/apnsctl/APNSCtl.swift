import ArgumentParser
import Foundation

@main
struct APNSCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apnsctl",
        abstract: "Inspect, store, check and test Apple push notification (APNs) credentials.",
        discussion: """
            Exit codes: 0 all good; 1 checked and found a problem (expired, expiring within the \
            warning window, key mismatch, environment or topic mismatch, APNs rejected the \
            notification); 2 could not check (unreadable input, wrong password, network or TLS \
            failure, secret store unavailable); 64 usage error.

            Human output is the default; --json gives a versioned machine-readable report. Colour \
            is used only on a terminal and never when NO_COLOR is set.
            """,
        version: APNSCtlVersion.current,
        subcommands: [
            Inspect.self, Request.self, Import.self, List.self, Check.self, Export.self, Remove.self, Handshake.self,
            Send.self,
            Preflight.self, Gateway.self,
        ]
    )

    static func main() async {
        // A write past a file-size limit (ulimit -f) must fail with EFBIG, which is reported, not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        do {
            var command = try parseAsRoot(nil)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // A library error that no command turned into its own message still gets one, with
            // the command line's hint and exit status 2, never a bare description and status 1.
            if reportLibraryError(error) { exit(withError: ExitStatus.couldNotCheck) }
            exit(withError: error)
        }
    }
}

enum APNSCtlVersion {
    static let current = "0.1.0"
}
