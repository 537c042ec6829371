import CredentialFormats
import Foundation
import NIOPosix
import PushChecks
import PushGateway
import PushStore

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

/// One probe: a handshake and an auth check on the same connection, or why it could not start.
public struct ProbeResult: Sendable {
    /// When the probe connected (or tried to).
    public var date: Date
    public var target: ProbeTarget
    /// Nil when the credential could not be loaded (no connection was made).
    public var check: HandshakeCheck?
    /// Why the credential could not be loaded, the connection not configured, or the probe not
    /// made (the credential does not serve the environment), typed: the metrics and the log
    /// line read its code and statement.
    public var setupError: (any ReportableError)?
    /// Wall-clock seconds of the whole probe.
    public var duration: Double

    public var success: Bool { check?.verdict == .accepted }
}

/// Connection settings shared by every probe: as `handshake` takes them.
public struct ProbeSettings: Sendable {
    public var connection: ConnectionSettings
    /// The least time between two connections for one credential and environment, whatever
    /// the topic; a scrape in between gets the result of the last one, because APNs treats
    /// rapid reconnects as abuse.
    public var minimumInterval: Double
    /// The most results remembered (one per credential and environment); the oldest is
    /// forgotten first, and so is every credential no longer in the store.
    public var cacheCapacity: Int

    public init(
        connection: ConnectionSettings = ConnectionSettings(),
        minimumInterval: Double = 60,
        cacheCapacity: Int = 1024
    ) {
        self.connection = connection
        self.minimumInterval = minimumInterval
        self.cacheCapacity = max(1, cacheCapacity)
    }
}

/// Probes a store's credentials against their gateways, at most once per interval per
/// credential and environment. Concurrent scrapes of one credential and environment share one
/// connection. Reading the store and loading secrets (files, the Secret Service) are awaited:
/// their blocking work runs on the libraries' ``BlockingPool``, never on the actor.
public actor ProbeService {
    struct Key: Hashable {
        var credential: String
        var environment: PushEnvironment
    }

    struct Entry {
        var result: ProbeResult
        /// What the log last said of this key, so that it says it again only when it changes.
        var logged: String
    }

    public let store: CredentialStore
    public let settings: ProbeSettings
    private let log: @Sendable (String) -> Void
    private var cache: BoundedCache<Key, Entry>
    private var running: [Key: Task<ProbeResult, Never>] = [:]
    private var recent = RecentProbes()
    /// The store's index as the exporter last read it (and why the last read failed), when it
    /// keeps one; nil reads the store at each request.
    private let index: (@Sendable () async -> (stored: [StoredCredential]?, failure: String?))?

    public init(
        store: CredentialStore,
        settings: ProbeSettings,
        log: @escaping @Sendable (String) -> Void = { _ in },
        index: (@Sendable () async -> (stored: [StoredCredential]?, failure: String?))? = nil
    ) {
        self.store = store
        self.settings = settings
        self.log = log
        self.index = index
        cache = BoundedCache(capacity: settings.cacheCapacity)
    }

    /// How many results are remembered.
    var cachedResults: Int { cache.count }

    /// The last probes made, newest first (at most 20): what the status page lists.
    public var recentResults: [ProbeResult] { recent.results }

    /// Reads a `/probe` query, checks it against the store, and answers it: the last result
    /// when the credential and environment were connected within the interval, else a new
    /// probe. `cached` says which.
    public nonisolated func answer(_ query: [(String, String)]) async throws -> (result: ProbeResult, cached: Bool) {
        let request = try Self.parse(query)
        let store = self.store
        let stored: [StoredCredential]
        if let index {
            let kept = await index()
            guard let list = kept.stored else {
                throw MonitoringError(
                    .invalidProbeRequest,
                    "The store cannot be read: \(kept.failure ?? "not read yet")."
                )
            }
            stored = list
        } else {
            do {
                stored = try await store.list()
            } catch let error as CredentialError {
                throw MonitoringError(.invalidProbeRequest, "The store cannot be read: \(error.message)")
            } catch {
                throw MonitoringError(.invalidProbeRequest, "The store cannot be read: \(UserFacing.describe(error))")
            }
        }
        let target = try Self.target(request, stored: stored, storePath: store.path)
        return await probe(target, stored: Set(stored.map(\.alias)))
    }

    /// Every topic a probe of `credential` may name: its own topics, the bundle IDs they belong
    /// to, and those with each push type's suffix (`.voip`, `.complication`...), as a push of
    /// that type would name them. A finite list, so that a scraper cannot make a connection
    /// (and a cache entry) of every string it makes up.
    public static func allowedTopics(of credential: StoredCredential) -> [String] {
        var seen = Set<String>()
        var topics: [String] = []
        func add(_ topic: String) { if seen.insert(topic).inserted { topics.append(topic) } }
        credential.topics.forEach(add)
        for app in credential.topics.map(TopicScope.app(of:)) {
            add(app)
            for pushType in PushType.known { add(pushType.topic(for: app)) }
        }
        return topics
    }

    func probe(
        _ target: ProbeTarget,
        stored aliases: Set<String>,
        now: Date = Date()
    ) async -> (result: ProbeResult, cached: Bool) {
        cache.retain { aliases.contains($0.credential) }
        let key = Key(credential: target.credential, environment: target.environment)
        if let last = cache[key]?.result, now.timeIntervalSince(last.date) < settings.minimumInterval {
            return (last, true)
        }
        if let task = running[key] { return (await task.value, true) }
        let task = Task { [store, settings] in
            await Self.run(target, store: store, settings: settings)
        }
        running[key] = task
        let result = await task.value
        running[key] = nil
        let line = Self.describe(result)
        if cache[key]?.logged != line { log(line) }
        cache[key] = Entry(result: result, logged: line)
        recent.record(result)
        return (result, false)
    }

    static func run(
        _ target: ProbeTarget,
        store: CredentialStore,
        settings: ProbeSettings
    ) async -> ProbeResult {
        let started = Date()
        let clock = ContinuousClock.now
        var result = ProbeResult(date: started, target: target, check: nil, setupError: nil, duration: 0)
        do {
            // Reads files, asks the Secret Service, may run a decryption tool: on the libraries' pool.
            let loaded = try await CredentialLoader(store: store).load(target.credential)
            var connection = settings.connection
            connection.environment = target.environment
            let plan = try GatewayPlan(loaded, settings: connection, topic: target.topic)
            // APNs refuses a credential outside the environments it serves; a gateway that does
            // not (the local one) would accept it. Either way the probe fails, saying why, and
            // makes no connection.
            if let mismatch = plan.warnings.first(where: { $0.code == .environmentMismatch }) {
                throw MonitoringError.environmentNotServed(target, mismatch)
            }
            result.check = await HandshakeCheck.run(plan, authCheck: true)
        } catch let error as any ReportableError {
            result.setupError = error
        } catch {
            result.setupError = MonitoringError(.setupFailed, UserFacing.describe(error))
        }
        let elapsed = ContinuousClock.now - clock
        result.duration = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }

    /// One log line: the target and the verdict, never a secret (nor the time it took, so
    /// that an unchanged verdict reads the same and is not logged again).
    static func describe(_ result: ProbeResult) -> String {
        let target = "probe \(Untrusted.display(result.target.credential)) \(result.target.environment)"
        if let setup = result.setupError {
            // What to do too: an operator reads it in the log, where nothing else says it.
            return "\(target): not connected (\(setup.code)): \(setup.statement)" + (setup.hint.map { " \($0)" } ?? "")
        }
        guard let check = result.check else { return "\(target): no result" }
        if let error = check.error { return "\(target): \(check.verdict) (\(error.code.name)): \(error.message)" }
        let auth =
            check.authCheck.map { answer in
                " (" + ([answer.status.map(String.init), answer.reason].compactMap { $0 }.joined(separator: " ")) + ")"
            } ?? ""
        return "\(target): \(check.verdict)\(auth)"
    }
}
