import ArgumentParser
import Foundation
import LocalGateway
import PushStore

#if canImport(Glibc)
import Glibc
#endif

struct Gateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "A local APNs-compatible gateway (HTTP/2 over TLS) for offline tests, demos and CI.",
        discussion: """
            `apnsctl gateway mint-identity` makes a test identity the gateway trusts; `apnsctl \
            gateway serve` runs the gateway. Point the other commands at it with --gateway \
            127.0.0.1:PORT and --ca FILE.

            Exit status: that of the subcommand run (see each one's --help); 0 with none, which \
            prints this help; 64 usage error.

            Examples. The .p12 password is in the environment variable P12_PASSWORD.
              apnsctl gateway mint-identity --topic com.example.app --environment both \\
                --ca-dir gw --out app.p12 --password-env P12_PASSWORD
              apnsctl gateway serve --client-ca gw/client-ca.pem \\
                --ca-out gw/server-ca.pem --port 2197
            """,
        subcommands: [Serve.self, MintIdentity.self]
    )
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    static func keep(_ source: any DispatchSourceSignal) {
        RunContext.current.with { $0.signalSources.append(source) }
    }
}
