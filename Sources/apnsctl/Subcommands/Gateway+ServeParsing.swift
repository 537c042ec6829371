import ArgumentParser
import Foundation
import LocalGateway
import PushStore

#if canImport(Glibc)
import Glibc
#endif

extension Gateway.Serve {
    /// The options checked together, before anything starts.
    func validate() throws {
        if (cert == nil) != (key == nil) { throw ValidationError("--cert and --key go together.") }
        if !idleTimeout.isFinite || idleTimeout < 0 {
            throw ValidationError("--idle-timeout is 0 or more seconds.")
        }
        if !handshakeTimeout.isFinite || handshakeTimeout <= 0 {
            throw ValidationError("--handshake-timeout is more than 0 seconds.")
        }
        if !firstRequestTimeout.isFinite || firstRequestTimeout < 0 {
            throw ValidationError("--first-request-timeout is 0 (never) or more seconds.")
        }
        if maxConnections < 1 { throw ValidationError("--max-connections is 1 or more.") }
        if !tokenKeys.isEmpty, teamID == nil { throw ValidationError("--token-key needs --team-id.") }
        for rate in [rate429, rate500, rate503] where !(0...1).contains(rate) {
            throw ValidationError("Fault rates are fractions between 0 and 1.")
        }
        if rate429 + rate500 + rate503 > 1 { throw ValidationError("The fault rates add up to more than 1.") }
        if let changeStreams, parsedChange(changeStreams) == nil {
            throw ValidationError("--change-streams takes K:N, e.g. 10:500.")
        }
        for entry in tokenKeys {
            let parts = entry.split(separator: "=", maxSplits: 1)
            if parts.count != 2 || parts[0].isEmpty || parts[1].isEmpty {
                throw ValidationError("--token-key takes KEYID=PUBLIC-KEY.pem, not \(entry).")
            }
        }
        _ = try keyScopeDeclarations()
        if !(0...65535).contains(port) { throw ValidationError("--port is between 0 (any free port) and 65535.") }
        if !(1...Int(Int32.max)).contains(maxConcurrentStreams) {
            throw ValidationError("--max-concurrent-streams is between 1 and \(Int32.max).")
        }
        if !latencyMilliseconds.isFinite || !(0...600_000).contains(latencyMilliseconds) {
            throw ValidationError("--latency-ms is between 0 and 600000.")
        }
        if let goAwayAfter, goAwayAfter < 1 {
            throw ValidationError("--goaway-after counts answered streams from 1.")
        }
        if let dropAfter, dropAfter < 1 { throw ValidationError("--drop-after is 1 or more.") }
        if let closeAfter, closeAfter < 0 {
            throw ValidationError("--close-after is 0 (close on the first request, unanswered) or more.")
        }
    }

    /// --key-environment and --key-topic, checked against --token-key and the gateway's environment.
    func keyScopeDeclarations() throws -> (
        environments: [String: PushEnvironment], topics: [String: [String]], otherEnvironmentKeyIDs: Set<String>
    ) {
        let keyIDs = Set(tokenKeys.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        func split(_ entry: String, _ option: String, _ shape: String) throws -> (String, String) {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("\(option) takes \(shape), not \(entry).")
            }
            return (parts[0], parts[1])
        }
        var environments: [String: PushEnvironment] = [:]
        var others: Set<String> = []
        for entry in keyEnvironments {
            let (keyID, name) = try split(entry, "--key-environment", "KEYID=sandbox or KEYID=production")
            guard let scope = PushEnvironment(rawValue: name) else {
                throw ValidationError("--key-environment \(entry): the environment is sandbox or production.")
            }
            if keyIDs.contains(keyID) {
                environments[keyID] = scope
            } else if scope == environment {
                throw ValidationError(
                    "--key-environment \(entry) names a key this \(environment) gateway would accept: give its public key with --token-key \(keyID)=PUBLIC-KEY.pem."
                )
            } else {
                others.insert(keyID)
            }
        }
        var topics: [String: [String]] = [:]
        for entry in keyTopics {
            let (keyID, topic) = try split(entry, "--key-topic", "KEYID=BUNDLE")
            guard keyIDs.contains(keyID) else {
                throw ValidationError("--key-topic \(entry) names no key: add --token-key \(keyID)=PUBLIC-KEY.pem.")
            }
            topics[keyID, default: []].append(topic)
        }
        return (environments, topics, others)
    }

    /// The options as the gateway's configuration (token keys from files are ``serveFiles()``'s).
    func gatewayConfiguration() throws -> LocalGateway.Configuration {
        var configuration = LocalGateway.Configuration(environment: environment)
        configuration.host = host
        configuration.port = port
        if let cert, let key { configuration.identity = .files(certificate: cert, privateKey: key) }
        configuration.clientCAFiles = clientCA
        configuration.otherEnvironmentKeyIDs = try keyScopeDeclarations().otherEnvironmentKeyIDs
        configuration.dynamics.keyScopes = keyScopes
        configuration.dynamics.singleStreamAfterRejection = singleStreamAfterRejection
        configuration.dynamics.singleStreamUntilToken = singleStreamUntilToken
        configuration.dynamics.goAwayReasons = goAwayReasons
        configuration.deviceRegistryFile = devices
        configuration.logFile = log
        configuration.faults.latency = latencyMilliseconds / 1000
        configuration.faults.tooManyRequestsRate = rate429
        configuration.faults.internalServerErrorRate = rate500
        configuration.faults.serviceUnavailableRate = rate503
        configuration.faults.seed = seed
        configuration.faults.goAwayAfterStreams = goAwayAfter
        configuration.faults.closeAfterStreams = closeAfter
        configuration.faults.dropAfterAccepted = dropAfter
        configuration.faults.maxConcurrentStreams = maxConcurrentStreams
        configuration.faults.changeMaxConcurrentStreams = changeStreams.flatMap(parsedChange)
        configuration.faults.answerEarlyAndReset = earlyAnswer
        configuration.idleTimeout = idleTimeout > 0 ? idleTimeout : nil
        configuration.handshakeTimeout = handshakeTimeout
        configuration.firstRequestTimeout = firstRequestTimeout > 0 ? firstRequestTimeout : nil
        configuration.maxConnections = maxConnections
        return configuration
    }

    /// --token-key with its --key-environment and --key-topic scopes, --ca-out, --port-file, --stats, --shown.
    func serveFiles() throws -> LocalGateway.ServeFiles {
        let scopes = try keyScopeDeclarations()
        var files = LocalGateway.ServeFiles()
        files.tokenKeys = tokenKeys.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            return .init(
                keyID: parts[0],
                teamID: teamID ?? "",
                publicKeyFile: parts[1],
                environment: scopes.environments[parts[0]],
                topics: scopes.topics[parts[0]] ?? []
            )
        }
        files.tokenKeysNamedBy = "--token-key"
        files.certificateAuthority = caOut
        files.replaceCertificateAuthority = force
        files.port = portFile
        files.statistics = statsFile
        files.shown = shown
        return files
    }

    func parsedChange(_ text: String) -> (afterAccepted: Int, to: Int)? {
        let parts = text.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 0, (1...Int(Int32.max)).contains(parts[1]) else { return nil }
        return (parts[0], parts[1])
    }

    /// The connections the bounds closed, for the line printed on exit ("" when none).
    static func boundsSummary(_ statistics: LocalGateway.Statistics) -> String {
        let parts = [
            (statistics.connectionsShed, "shed at the connection cap"),
            (statistics.connectionsRefused, "refused at the cap (none idle)"),
            (statistics.handshakeTimeouts, "closed by the handshake timeout"),
            (statistics.firstRequestTimeouts, "closed by the first-request timeout"),
            (statistics.idleConnectionsClosed, "closed by the idle timeout"),
            (statistics.connectionsDropped, "dropped for misbehaving"),
        ].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return parts.isEmpty ? "" : "; of those, " + parts.joined(separator: ", ")
    }

    /// Starts watching for SIGINT and SIGTERM; the result completes when one arrives.
    static func watchTermination() -> Once<Bool> {
        let signalled = Once<Bool>()
        // The default action is turned off first; the dispatch sources then install the
        // handler that hears the signal (setting SIG_IGN after them would silence it).
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        for number in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { signalled.complete(true) }
            source.resume()
            SignalSources.keep(source)
        }
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        return signalled
    }
}
