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

    static func begin(_ arguments: [String], stored: StoredCredential) {
        guard arguments.count > 2, arguments[1] == "send", stored.kind == .tokenKey else { return }
        var settings = ConnectionSettings()
        var requested: PushEnvironment?
        var index = 3
        while index < arguments.count {
            let argument = arguments[index]
            let (name, attached) = split(argument)
            guard !otherConnections.contains(name) else { return }
            let value = attached ?? (index + 1 < arguments.count ? arguments[index + 1] : nil)
            let takesValue = attached == nil
            switch name {
            case "--gateway": settings.gateway = value
            case "--port": settings.port = value.flatMap { Int($0) }
            case "--ca": if let value { settings.caFiles.append(value) }
            case "--ca-bundle": settings.caBundle = value
            case "--resolve":
                if let value, let fixed = try? FixedAddress.parse(value) { settings.fixedAddresses.append(fixed) }
            case "--timeout": if let seconds = value.flatMap(Double.init) { settings.timeout = seconds }
            case "--environment":
                guard let environment = value.flatMap(PushEnvironment.init(rawValue:)) else { return }
                requested = environment
            case "-4", "--ipv4": settings.addressFamily = .ipv4
            case "-6", "--ipv6": settings.addressFamily = .ipv6
            default:
                index += 1
                continue
            }
            let isFlag = name == "-4" || name == "--ipv4" || name == "-6" || name == "--ipv6"
            index += isFlag || !takesValue ? 1 : 2
        }
        let environment = requested ?? (stored.environments.count == 1 ? stored.environments[0] : .sandbox)
        guard let plan = try? settings.configuration(for: .none, environment: environment) else { return }
        GatewayConnection.connectAhead(plan.configuration)
    }

    /// `--name=value` as its name and value; anything else as itself and nil.
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
