import Foundation
import PushCore
import PushGateway
import PushStore

/// The connection of `send` to a stored token key, started from the raw command line while the
/// argument parser builds the command: after the process start, parsing is the longest part of a
/// cold probe, and the connection (DNS, TCP, TLS, HTTP/2) the next (docs/performance.md, "The
/// cold probe").
///
/// Only a guess, as the early credential is: the library takes the connection over only when
/// the parsed command's connection settings are the ones guessed here, and closes it unused
/// otherwise (`GatewayConnection.connectAhead`). So nothing here decides anything: an option it
/// reads wrongly costs a connection, never a wrong one, and its failures are nobody's message.
enum EarlyConnection {
    /// Options that choose another kind of connection than one notification's (a bulk run's own,
    /// a broadcast's channel service) or that the guess does not follow (a proxy's origin).
    private static let otherConnections: Set<String> = ["--tokens", "--channel", "--proxy"]

    /// What the command line says of the connection, before the parser has read it.
    struct Guess {
        var settings = ConnectionSettings()
        var environment: PushEnvironment?
    }

    /// Starts the connection when the command line names its gateway: then only the stored
    /// credential's kind is missing, and the early load checks it as soon as the index is read
    /// (``settle(_:startedEarly:stored:)``). True when it started.
    static func beginFromCommandLine(_ guess: Guess) -> Bool {
        guard guess.settings.gateway != nil else { return false }
        // An Apple host names its environment itself; a local gateway has none.
        let named = try? Endpoint.resolve(environment: nil, port: guess.settings.port, gateway: guess.settings.gateway)
        return start(guess, environment: guess.environment ?? named?.endpoint.environment ?? .sandbox)
    }

    /// After the index is read: a connection started from the command line is closed at once
    /// unless the credential is a token key (a certificate is part of the TLS handshake); with
    /// no gateway on the command line, the stored key's environment gives it, and it starts now.
    static func settle(_ guess: Guess, startedEarly: Bool, stored: StoredCredential?) {
        guard let stored, stored.kind == .tokenKey else {
            if startedEarly { GatewayConnection.dropAhead() }
            return
        }
        guard !startedEarly else { return }
        let environment =
            guess.environment ?? (stored.environments.count == 1 ? stored.environments[0] : .sandbox)
        _ = start(guess, environment: environment)
    }

    private static func start(_ guess: Guess, environment: PushEnvironment) -> Bool {
        guard let plan = try? guess.settings.configuration(for: .none, environment: environment) else { return false }
        // The connection `GatewayPlan.send` asks for: one notification's.
        GatewayConnection.connectAhead(plan.configuration.forOneExchange)
        return true
    }

    /// The connection options of a `send` command line; nil for another command, or one that
    /// makes another kind of connection.
    static func guess(_ arguments: [String]) -> Guess? {
        guard arguments.count > 2, arguments[1] == "send" else { return nil }
        var guess = Guess()
        var index = 3
        while index < arguments.count {
            let argument = arguments[index]
            let (name, attached) = split(argument)
            guard !otherConnections.contains(name) else { return nil }
            let value = attached ?? (index + 1 < arguments.count ? arguments[index + 1] : nil)
            let takesValue = attached == nil
            switch name {
            case "--gateway": guess.settings.gateway = value
            case "--port": guess.settings.port = value.flatMap { Int($0) }
            case "--ca": if let value { guess.settings.caFiles.append(value) }
            case "--ca-bundle": guess.settings.caBundle = value
            case "--resolve":
                if let value, let fixed = try? FixedAddress.parse(value) { guess.settings.fixedAddresses.append(fixed) }
            case "--timeout": if let seconds = value.flatMap(Double.init) { guess.settings.timeout = seconds }
            case "--environment":
                guard let environment = value.flatMap(PushEnvironment.init(rawValue:)) else { return nil }
                guess.environment = environment
            case "-4", "--ipv4": guess.settings.addressFamily = .ipv4
            case "-6", "--ipv6": guess.settings.addressFamily = .ipv6
            default:
                index += 1
                continue
            }
            let isFlag = name == "-4" || name == "--ipv4" || name == "-6" || name == "--ipv6"
            index += isFlag || !takesValue ? 1 : 2
        }
        return guess
    }

    /// `--name=value` as its name and value; anything else as itself and nil.
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
