import Crypto
import Foundation
import PushCore

/// A provider token as the fleet shares it.
public struct SharedToken: Sendable, CustomStringConvertible {
    /// The JWT, for `authorization: bearer`. A secret: never log it.
    public let token: String
    /// Its `iat`.
    public let issuedAt: Date
    /// The APNs key ID in its header.
    public let keyID: String
    /// The KV version that holds it (for a token of the process's own, the version it stands in for).
    public let version: Int
    /// True when this call made the token (it won the check-and-set write, or signed one for
    /// this process alone); false when it took one another process (or an earlier call) made.
    public let minted: Bool

    /// Never the token itself.
    public var description: String {
        "provider token for \(keyID) issued at \(Int(issuedAt.timeIntervalSince1970)) (version \(version))"
    }
}

/// One provider token per APNs key for a whole fleet, kept in KV version 2 with check-and-set.
///
/// APNs takes a new provider token at most once every 20 minutes per key
/// (`TooManyProviderTokenUpdates`) and refuses tokens older than 60 minutes
/// (`ExpiredProviderToken`), so instances that each mint their own trip the first limit. Here
/// every instance reads `PREFIX/tokens/KEYID`, `{token, iat, key_id}`:
///
/// 1. a token younger than ``refreshAge`` (40 minutes by default, 20 to 50 allowed) is used as
///    it is, once it is verified (see ``verify(_:now:)``): its ES256 signature by the key's
///    public key, its `kid`, its `iss` and its `iat`. An entry that fails is not used, and a
///    warning names it;
/// 2. otherwise a new JWT (header `{alg: ES256, kid}`, claims `{iss: team ID, iat}`) is signed
///    by the key in Transit and written with `cas` = the entry's current version (a deleted
///    or destroyed version keeps its number);
/// 3. a write that loses the check-and-set means another instance minted first: its token is
///    read and used;
/// 4. a token whose policies may not write the entry (the exporter's) uses the token it signed
///    for itself until that token is old.
///
/// So of N instances that find the token old at once, exactly one writes a new one; the others
/// use it. (The losers' signatures are discarded unused: APNs only counts tokens it is sent.)
///
/// A process never switches away from the token it sends with (the last one it verified, wrote
/// or signed) while that is younger than ``refreshAge`` and APNs did not refuse it, whatever the
/// entry holds: every switch costs its connections one of APNs' token changes, and a role that
/// may write `tokens/` must not be able to make the fleet switch as often as it writes. When the
/// entry is missing, old or not valid, that token is written back in its place (check-and-set)
/// instead of a new one; an entry holding another valid token is left as it is. Once its token is
/// old, a process takes the entry's only if it was issued at least ``minimumTokenInterval`` after
/// its own (else it mints), so that no process changes token sooner than APNs allows.
public struct SharedProviderToken: Sendable {
    /// The default refresh age: 40 minutes, well inside APNs' 20-to-60-minute window.
    public static let defaultRefreshAge: TimeInterval = 40 * 60
    /// The refresh ages accepted: no sooner than APNs allows, and leaving at least 10 minutes of
    /// use before the token expires.
    public static let allowedRefreshAges: ClosedRange<TimeInterval> = (20 * 60)...(50 * 60)
    /// A token dated this far in the future (another host's clock) still counts as fresh.
    static let clockSkew: TimeInterval = 60

    /// Where the entry is kept.
    public let kv: KVv2
    /// The engine whose key signs.
    public let transit: Transit
    /// The Transit key's name.
    public let transitKey: String
    /// The APNs key ID (`kid`).
    public let keyID: String
    /// The team ID (`iss`).
    public let teamID: String
    /// The entry's path in the KV mount: `PREFIX/tokens/KEYID`.
    public let path: String
    /// How old a token may be before it is replaced.
    public let refreshAge: TimeInterval
    /// The clock that dates tokens and judges their age.
    public let clock: GatewayClock
    /// Told, once per entry version, why a shared token is not used, and when this process
    /// signs a token of its own; by default written to standard error.
    public let warn: @Sendable (String) -> Void
    /// What this value remembers between calls: shared by its copies and by every value of the
    /// same entry made with the same client.
    let memory: SharedTokenMemory

    /// A shared token for the APNs key `keyID` of team `teamID`, signed by the Transit key
    /// `transitKey` (by default ``Transit/keyName(for:)``) and kept under `prefix` in `kv`.
    /// A shared token is verified against `publicKey`, the key's public key as the store knows
    /// it; without one, against the public key of the Transit key's latest version.
    public init(
        kv: KVv2,
        transit: Transit,
        keyID: String,
        teamID: String,
        transitKey: String? = nil,
        prefix: String = "apnsctl",
        refreshAge: TimeInterval = SharedProviderToken.defaultRefreshAge,
        clock: GatewayClock = .system,
        publicKey: P256.Signing.PublicKey? = nil,
        warn: @escaping @Sendable (String) -> Void = SharedProviderToken.warnOnStandardError
    ) throws {
        guard ProviderKey.isIdentifier(keyID), ProviderKey.isIdentifier(teamID) else {
            throw VaultError.invalidConfiguration(
                address: kv.client.address,
                "The key ID and team ID must be 10 upper-case letters and digits each.",
                hint: "Copy them from the Apple Developer portal."
            )
        }
        guard Self.allowedRefreshAges.contains(refreshAge) else {
            throw VaultError.invalidConfiguration(
                address: kv.client.address,
                "A shared provider token's refresh age must be 20 to 50 minutes, not \(Int(refreshAge / 60)).",
                hint: "APNs refuses new tokens more often than every 20 minutes and tokens older than 60."
            )
        }
        self.kv = kv
        self.transit = transit
        self.transitKey = transitKey ?? Transit.keyName(for: keyID)
        self.keyID = keyID
        self.teamID = teamID
        let trimmed = KVv2.trim(prefix)
        self.path = (trimmed.isEmpty ? "" : trimmed + "/") + "tokens/" + keyID
        self.refreshAge = refreshAge
        self.clock = clock
        self.warn = warn
        memory = kv.client.tokenMemory(for: "\(kv.mount)/\(path) \(transit.mount)/keys/\(self.transitKey)")
        if let publicKey { memory.knownPublicKey = publicKey }
    }

    /// Writes `message` to standard error as a warning.
    public static let warnOnStandardError: @Sendable (String) -> Void = { message in
        FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
    }

    /// The entry as Vault's CLI names it.
    var entryName: String { "\(kv.mount)/\(path)" }

    /// The token to send now: the one this process holds while it is fresh, else the fleet's
    /// current one, else a new one (made by this call only if no other instance made it first).
    /// See ``SharedProviderToken`` for the rules.
    public func token() async throws -> SharedToken {
        var lastError: VaultError?
        for attempt in 0..<4 {
            let now = clock.now()
            let (entry, current) = try await kv.latest(path)
            let held = memory.heldToken
            let fresh = held.flatMap { isFresh($0.issuedAt, now: now) ? $0 : nil }
            if let entry {
                switch try await verify(entry, now: now) {
                case .valid(let shared):
                    if let fresh, fresh.jwt != shared.token {
                        // Another valid token: switching would cost this process's connections
                        // one of APNs' token changes, so it keeps its own while it is fresh.
                        return Self.shared(fresh, keyID: keyID, version: entry.version)
                    }
                    if fresh != nil || mayAdopt(shared, after: held) {
                        memory.hold(IssuedProviderToken(jwt: shared.token, issuedAt: shared.issuedAt))
                        return shared
                    }
                case .old: break
                case .refused(let why):
                    if memory.firstWarning(for: entry.version) {
                        let instead =
                            fresh == nil
                            ? "A new one is signed with Transit in its place."
                            : memory.mayNotWrite
                                ? "This process keeps the token it holds (its policies do not let it write the entry)."
                                : "This process keeps the token it holds and writes it back in its place."
                        warn(
                            "The shared provider token at \(entryName) (version \(entry.version)) at \(kv.client.address) is not used: \(why). \(instead)"
                        )
                    }
                }
            }
            if let fresh { return try await restore(fresh, over: current) }
            do {
                return try await mint(now: now, over: current, keepIfLost: attempt == 3)
            } catch let error as VaultError where error.code == .casMismatch {
                // Another instance won: the next read finds its token.
                lastError = error
            }
        }
        throw lastError ?? VaultError.casMismatch(address: kv.client.address, path: path, expected: 0)
    }

    /// APNs answered `InvalidProviderToken` to `jwt`: it is not used again, whether the entry
    /// or this process holds it, and the next ``token()`` signs a new one.
    public func reject(_ jwt: String) { memory.reject(jwt) }

    func isFresh(_ issuedAt: Date, now: Date) -> Bool {
        let age = now.timeIntervalSince(issuedAt)
        return age >= -Self.clockSkew && age < refreshAge
    }
}
