import ArgumentParser
import CredentialFormats
import Foundation
import PushChecks
import PushGateway
import PushStore

/// Which gateway to talk to and how to trust it. The environment is each command's own option:
/// `handshake` and `send` can default it from the credential, `preflight` requires it.
struct ConnectionOptions: ParsableArguments {
    /// `--environment` for commands that can take it from the credential.
    static let optionalEnvironmentHelp = ArgumentHelp(
        "The APNs environment (default: the credential's own when it has one, else sandbox).",
        valueName: "sandbox|production"
    )

    @Option(help: ArgumentHelp("443 (default) or 2197, for networks that block 443.", valueName: "PORT"))
    var port: Int?

    @Option(
        help: ArgumentHelp(
            "Any other gateway, such as `apnsctl gateway serve` (legacy gateway.push.apple.com names are mapped).",
            valueName: "HOST:PORT"
        )
    )
    var gateway: String?

    @Option(
        help: ArgumentHelp(
            "Also trust this CA certificate (PEM), e.g. the local gateway's --ca-out file. Repeatable.",
            valueName: "FILE"
        ),
        completion: .pemFile
    )
    var ca: [String] = []

    @Option(
        help: ArgumentHelp(
            "Trust the roots in this PEM bundle instead of the system's trust store (--ca still adds to it).",
            valueName: "FILE"
        ),
        completion: .pemFile
    )
    var caBundle: String?

    @Flag(name: [.customShort("4"), .customLong("ipv4")], help: "Connect over IPv4 only.")
    var ipv4 = false

    @Flag(name: [.customShort("6"), .customLong("ipv6")], help: "Connect over IPv6 only.")
    var ipv6 = false

    @Option(
        help: ArgumentHelp(
            "Use these addresses for HOST:PORT instead of DNS, as curl's --resolve (IPv6 in brackets). Repeatable.",
            valueName: "HOST:PORT:ADDR[,ADDR]"
        )
    )
    var resolve: [String] = []

    @Option(help: ArgumentHelp("HTTP CONNECT proxy (default: $HTTPS_PROXY).", valueName: "URL"))
    var proxy: String?

    @Option(
        help: ArgumentHelp(
            "Seconds allowed for each phase (DNS, TCP, TLS, HTTP/2) and for each request.",
            valueName: "SECONDS"
        )
    )
    var timeout: Double = 10

    func validate() throws {
        if ipv4 && ipv6 {
            throw ValidationError("Give -4 or -6, not both: without either, both families are tried (Happy Eyeballs).")
        }
        for entry in resolve {
            do { _ = try FixedAddress.parse(entry) } catch let error as GatewayError {
                throw ValidationError("--resolve: \(error.message) \(error.hint ?? "")")
            }
        }
        if let port, !(1...65535).contains(port) { throw ValidationError("--port must be between 1 and 65535.") }
        if !timeout.isFinite || timeout <= 0 || timeout > 3600 {
            throw ValidationError("--timeout must be more than 0 and at most 3600 seconds.")
        }
        if let proxy, URL(string: proxy)?.host == nil {
            throw ValidationError("--proxy takes a URL such as http://proxy.example.com:3128.")
        }
        if let proxy, let scheme = URL(string: proxy)?.scheme?.lowercased(), scheme != "http" {
            throw ValidationError(
                "--proxy \(proxy) is a \(scheme) proxy; only HTTP CONNECT proxies (http://host:port) are supported."
            )
        }
    }

    /// The options as the library takes them, with the environment asked for (nil: the credential's).
    func settings(environment: PushEnvironment?) -> ConnectionSettings {
        ConnectionSettings(
            environment: environment,
            port: port,
            gateway: gateway,
            caFiles: ca,
            caBundle: caBundle,
            addressFamily: ipv4 ? .ipv4 : ipv6 ? .ipv6 : nil,
            fixedAddresses: resolve.compactMap { try? FixedAddress.parse($0) },
            proxy: proxy,
            timeout: timeout
        )
    }

    /// The library's plan for `credential` with these options, and the notes to show before
    /// connecting: legacy names mapped, and sandbox taken when nothing said which environment.
    func plan(
        for credential: LoadedCredential,
        requested: PushEnvironment?,
        topic: String? = nil,
        pushType: PushType = .alert,
        service: GatewayPlan.Service = .push
    ) throws -> (GatewayPlan, notes: [String]) {
        var plan = try GatewayPlan(
            credential,
            settings: settings(environment: requested),
            topic: topic,
            pushType: pushType,
            service: service
        )
        if plan.proxy?.source == .explicit { plan.configuration.proxyOrigin = "--proxy" }
        var notes = plan.notices
        if plan.choice.reason == .defaultSandbox {
            notes.append(
                "No --environment given and the credential is for \(plan.choice.credentialDescription); using sandbox."
            )
        }
        return (plan, notes)
    }
}

/// How to find the credential: the store, or a file with its password (or, for a .p8, its IDs).
struct CredentialOptions: ParsableArguments {
    @OptionGroup var store: StoreOptions
    @OptionGroup var password: PasswordOptions

    @Option(name: .customLong("team-id"), help: ArgumentHelp("With a .p8 file: its team ID.", valueName: "TEAMID"))
    var teamID: String?

    @Option(help: ArgumentHelp("With a .p8 file: its key ID (default: from AuthKey_KEYID.p8).", valueName: "KEYID"))
    var keyID: String?

    /// The library's loader, with these options.
    var loader: CredentialLoader {
        get async throws {
            CredentialLoader(
                store: try await store.credentialStore,
                password: password.source(),
                teamID: teamID,
                keyID: keyID
            )
        }
    }

    func load(_ argument: String) async throws -> LoadedCredential {
        RunContext.current[\.credentialArgument] = argument
        return try await loader.load(argument)
    }
}
