import Foundation

/// A clock the connection reads to date and renew provider tokens; tests give their own.
public struct GatewayClock: Sendable {
    public let now: @Sendable () -> Date
    public init(now: @escaping @Sendable () -> Date) { self.now = now }
    public static let system = GatewayClock { Date() }
}

/// Caches the provider token (JWT) and renews it after ``renewAfter``.
///
/// APNs rejects tokens older than 60 minutes (ExpiredProviderToken) and refreshing more often
/// than every 20 minutes (TooManyProviderTokenUpdates), so one token serves every request on
/// every connection until it is 50 minutes old. The token is a secret: it is never logged or
/// put into an error.
///
/// With a key in memory the cache signs its own tokens, at once. With a key held elsewhere
/// (``RemoteProviderKey``) the token comes from the key's source, over the network: a
/// connection awaits ``prepare()`` before it sends, and ``token()`` then answers from the cache.
public final class ProviderTokenCache: @unchecked Sendable {
    /// Renewal age: inside APNs' window of 20 to 60 minutes.
    public static let defaultRenewAfter: TimeInterval = 50 * 60

    private enum Minter {
        case local(ProviderKey)
        case remote(RemoteProviderKey)
    }

    private struct State {
        var token: String?
        var issuedAt: Date?
        var renewals = 0
    }

    public let keyID: String
    public let clock: GatewayClock
    public let renewAfter: TimeInterval
    private let minter: Minter
    private let lock = NSLock()
    private var state = State()

    public init(key: ProviderKey, clock: GatewayClock, renewAfter: TimeInterval = ProviderTokenCache.defaultRenewAfter)
    {
        keyID = key.keyID
        minter = .local(key)
        self.clock = clock
        self.renewAfter = renewAfter
    }

    public init(
        remote key: RemoteProviderKey,
        clock: GatewayClock,
        renewAfter: TimeInterval = ProviderTokenCache.defaultRenewAfter
    ) {
        keyID = key.keyID
        minter = .remote(key)
        self.clock = clock
        self.renewAfter = renewAfter
    }

    /// The cache for a connection's credential: nil without token authentication.
    public convenience init?(
        for credential: ClientCredential,
        clock: GatewayClock,
        renewAfter: TimeInterval = ProviderTokenCache.defaultRenewAfter
    ) {
        switch credential {
        case .token(let key): self.init(key: key, clock: clock, renewAfter: renewAfter)
        case .remoteToken(let key): self.init(remote: key, clock: clock, renewAfter: renewAfter)
        case .certificate, .none: return nil
        }
    }

    /// Whether tokens come from elsewhere, so that ``prepare()`` must be awaited before sending.
    public var needsPreparing: Bool {
        if case .remote = minter { return true }
        return false
    }

    /// The cached token while it is young enough. A token another host issued may be dated a
    /// little ahead of this clock; one this process made is renewed when the clock went back.
    private func fresh(_ state: State, now: Date) -> String? {
        let skew: TimeInterval = needsPreparing ? 60 : 0
        guard let token = state.token, let issuedAt = state.issuedAt,
            now >= issuedAt.addingTimeInterval(-skew), now.timeIntervalSince(issuedAt) < renewAfter
        else { return nil }
        return token
    }

    /// The current token, made anew when there is none or it is ``renewAfter`` old (or the clock
    /// went backwards). With a key held elsewhere, the one ``prepare()`` fetched; a cache not
    /// prepared since its token aged throws.
    public func token() throws -> String {
        let now = clock.now()
        lock.lock()
        defer { lock.unlock() }
        if let token = fresh(state, now: now) { return token }
        switch minter {
        case .local(let key):
            let token = try key.makeJWT(issuedAt: now)
            state.token = token
            state.issuedAt = now
            state.renewals += 1
            return token
        case .remote(let key):
            throw PushCoreError(
                .invalidKey,
                "No provider token is ready for key \(key.keyID): it comes from the key's store and was not fetched.",
                hint: "Fetch it before sending (ProviderTokenCache.prepare)."
            )
        }
    }

    /// Makes sure a valid token is cached: for a key held elsewhere, asks its source when the
    /// cached token is missing or ``renewAfter`` old. Nothing to do for a key in memory.
    public func prepare() async throws {
        guard case .remote(let key) = minter else { return }
        let now = clock.now()
        if lock.withLock({ fresh(state, now: now) }) != nil { return }
        let issued = try await key.source.currentToken()
        lock.withLock {
            if state.token != issued.jwt { state.renewals += 1 }
            state.token = issued.jwt
            state.issuedAt = issued.issuedAt
        }
    }

    /// APNs answered `InvalidProviderToken` to the cached token of a key held elsewhere: it is
    /// dropped and its source told, so that the next ``prepare()`` fetches another. False (and
    /// nothing done) for a key in memory, or when `jwt` is no longer the cached token (another
    /// request dropped it already).
    public func dropRejected(_ jwt: String) async -> Bool {
        guard case .remote(let key) = minter else { return false }
        let dropped: IssuedProviderToken? = lock.withLock {
            guard state.token == jwt, let issuedAt = state.issuedAt else { return nil }
            state.token = nil
            state.issuedAt = nil
            return IssuedProviderToken(jwt: jwt, issuedAt: issuedAt)
        }
        guard let dropped else { return false }
        await key.source.tokenRejected(dropped)
        return true
    }

    /// When the cached token was issued (nil before the first request).
    public var issuedAt: Date? { lock.withLock { state.issuedAt } }
    /// How many tokens were made (or, from elsewhere, taken) so far.
    public var tokensMade: Int { lock.withLock { state.renewals } }
}
