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
public final class ProviderTokenCache: @unchecked Sendable {
    /// Renewal age: inside APNs' window of 20 to 60 minutes.
    public static let defaultRenewAfter: TimeInterval = 50 * 60

    private struct State {
        var token: String?
        var issuedAt: Date?
        var renewals = 0
    }

    public let key: ProviderKey
    public let clock: GatewayClock
    public let renewAfter: TimeInterval
    private let lock = NSLock()
    private var state = State()

    public init(key: ProviderKey, clock: GatewayClock, renewAfter: TimeInterval = ProviderTokenCache.defaultRenewAfter)
    {
        self.key = key
        self.clock = clock
        self.renewAfter = renewAfter
    }

    /// The current token, made anew when there is none or it is ``renewAfter`` old (or the clock
    /// went backwards).
    public func token() throws -> String {
        let now = clock.now()
        lock.lock()
        defer { lock.unlock() }
        if let token = state.token, let issuedAt = state.issuedAt,
            now >= issuedAt, now.timeIntervalSince(issuedAt) < renewAfter
        {
            return token
        }
        let token = try key.makeJWT(issuedAt: now)
        state.token = token
        state.issuedAt = now
        state.renewals += 1
        return token
    }

    /// When the cached token was issued (nil before the first request).
    public var issuedAt: Date? { lock.withLock { state.issuedAt } }
    /// How many tokens were made so far.
    public var tokensMade: Int { lock.withLock { state.renewals } }
}
