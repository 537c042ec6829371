import Foundation
import PushCredentials
import PushGateway

/// What a `/probe` request asks for: a stored credential, the environment whose gateway to
/// probe, and the topic for the auth check (default: the credential's own).
public struct ProbeTarget: Hashable, Sendable {
    public var credential: String
    public var environment: PushEnvironment
    public var topic: String?

    public init(credential: String, environment: PushEnvironment, topic: String? = nil) {
        self.credential = credential
        self.environment = environment
        self.topic = topic
    }
}

/// A request the exporter refuses (400), with a message that says what to send instead.
public struct ProbeRequestError: ReportableError {
    public var code: ErrorCode { .invalidProbeRequest }
    public var message: String
    public var hint: String? { nil }
    /// The request asks for what cannot be probed: the scraper's configuration is to change.
    public var failure: FailureKind { .invalidRequest }
    public init(_ message: String) { self.message = message }
}

extension ErrorCode {
    /// A `/probe` request with an unknown parameter, a missing or unknown credential or environment.
    public static let invalidProbeRequest = ErrorCode("invalid_probe_request")
}

/// One probe: a handshake and an auth check on the same connection, or why it could not start.
public struct ProbeResult: Sendable {
    /// When the probe connected (or tried to).
    public var date: Date
    public var target: ProbeTarget
    /// Nil when the credential could not be loaded (no connection was made).
    public var check: HandshakeCheck?
    /// Why the credential could not be loaded or the connection not configured.
    public var setupError: ReportedError?
    /// Wall-clock seconds of the whole probe.
    public var duration: Double

    public var success: Bool { check?.verdict == .accepted }
}

/// Connection settings shared by every probe: as `handshake` takes them.
public struct ProbeSettings: Sendable {
    public var connection: ConnectionSettings
    /// The least time between two connections for one target; a scrape in between gets the
    /// result of the last one, because APNs treats rapid reconnects as abuse.
    public var minimumInterval: Double

    public init(connection: ConnectionSettings = ConnectionSettings(), minimumInterval: Double = 60) {
        self.connection = connection
        self.minimumInterval = minimumInterval
    }
}

/// Probes a store's credentials against their gateways, at most once per interval per target.
/// Concurrent scrapes of one target share one connection.
public actor ProbeService {
    public let store: CredentialStore
    public let settings: ProbeSettings
    private let log: @Sendable (String) -> Void
    private var cache: [ProbeTarget: ProbeResult] = [:]
    private var running: [ProbeTarget: Task<ProbeResult, Never>] = [:]

    public init(store: CredentialStore, settings: ProbeSettings, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.store = store
        self.settings = settings
        self.log = log
    }

    /// Reads `credential`, `environment` and `topic` from a query. Only stored aliases are
    /// taken: a file path would let anyone who can scrape read files as the exporter's user.
    public nonisolated func target(from query: [(String, String)]) throws -> ProbeTarget {
        let known = ["credential", "environment", "topic"]
        if let unknown = query.first(where: { !known.contains($0.0) }) {
            throw ProbeRequestError(
                "Unknown parameter \"\(unknown.0)\": /probe takes credential=ALIAS, environment=sandbox|production and optionally topic=BUNDLE."
            )
        }
        let value = { (name: String) in query.last(where: { $0.0 == name })?.1 }
        guard let alias = value("credential"), !alias.isEmpty else {
            throw ProbeRequestError(
                "Missing credential=ALIAS: name a credential of the store (apnsctl list shows them)."
            )
        }
        guard let environmentText = value("environment") else {
            throw ProbeRequestError("Missing environment=sandbox|production: say which gateway to probe.")
        }
        guard let environment = PushEnvironment(rawValue: environmentText) else {
            throw ProbeRequestError(
                "environment=\(Untrusted.display(environmentText)) is not an environment: use sandbox or production."
            )
        }
        let stored: StoredCredential?
        do {
            stored = try store.credential(named: alias)
        } catch let error as CredentialError {
            throw ProbeRequestError("The store cannot be read: \(error.message)")
        } catch {
            throw ProbeRequestError("The store cannot be read: \(error)")
        }
        guard stored != nil else {
            throw ProbeRequestError(
                "No credential \"\(Untrusted.display(alias))\" in the store at \(store.path): name one that apnsctl list shows."
            )
        }
        let topic = value("topic").flatMap { $0.isEmpty ? nil : $0 }
        return ProbeTarget(credential: alias, environment: environment, topic: topic)
    }

    /// The last result when it is recent enough, else a new probe. `cached` says which.
    public func probe(_ target: ProbeTarget, now: Date = Date()) async -> (result: ProbeResult, cached: Bool) {
        if let last = cache[target], now.timeIntervalSince(last.date) < settings.minimumInterval {
            return (last, true)
        }
        if let task = running[target] { return (await task.value, true) }
        let task = Task { [store, settings] in await Self.run(target, store: store, settings: settings) }
        running[target] = task
        let result = await task.value
        running[target] = nil
        cache[target] = result
        log(Self.describe(result))
        return (result, false)
    }

    static func run(_ target: ProbeTarget, store: CredentialStore, settings: ProbeSettings) async -> ProbeResult {
        let started = Date()
        let clock = ContinuousClock.now
        var result = ProbeResult(date: started, target: target, check: nil, setupError: nil, duration: 0)
        do {
            let loaded = try CredentialLoader(store: store).load(target.credential)
            var connection = settings.connection
            connection.environment = target.environment
            let plan = try GatewayPlan(loaded, settings: connection, topic: target.topic)
            result.check = await HandshakeCheck.run(plan, authCheck: true)
        } catch let error as any ReportableError {
            result.setupError = ReportedError(error)
        } catch {
            result.setupError = ReportedError(code: "setup_failed", message: UserFacing.describe(error))
        }
        let elapsed = ContinuousClock.now - clock
        result.duration = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }

    /// One log line: the target and the verdict, never a secret.
    static func describe(_ result: ProbeResult) -> String {
        let target = "probe \(Untrusted.display(result.target.credential)) \(result.target.environment)"
        if let setup = result.setupError { return "\(target): not connected (\(setup.code)): \(setup.message)" }
        guard let check = result.check else { return "\(target): no result" }
        if let error = check.error { return "\(target): \(check.verdict) (\(error.code.name)): \(error.message)" }
        let auth =
            check.authCheck.map { answer in
                " (" + ([answer.status.map(String.init), answer.reason].compactMap { $0 }.joined(separator: " ")) + ")"
            } ?? ""
        return "\(target): \(check.verdict)\(auth)"
    }
}
