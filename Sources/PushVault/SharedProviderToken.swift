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
    /// The KV version that holds it.
    public let version: Int
    /// True when this call made the token (it won the check-and-set write); false when it took
    /// one another process (or an earlier call) made.
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
///    it is;
/// 2. otherwise a new JWT (header `{alg: ES256, kid}`, claims `{iss: team ID, iat}`) is signed
///    by the key in Transit and written with `cas` = the version read;
/// 3. a write that loses the check-and-set means another instance minted first: its token is
///    read and used.
///
/// So of N instances that find the token old at once, exactly one writes a new one; the others
/// use it. (The losers' signatures are discarded unused: APNs only counts tokens it is sent.)
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

    /// A shared token for the APNs key `keyID` of team `teamID`, signed by the Transit key
    /// `transitKey` (by default ``Transit/keyName(for:)``) and kept under `prefix` in `kv`.
    public init(
        kv: KVv2,
        transit: Transit,
        keyID: String,
        teamID: String,
        transitKey: String? = nil,
        prefix: String = "apnsctl",
        refreshAge: TimeInterval = SharedProviderToken.defaultRefreshAge,
        clock: GatewayClock = .system
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
    }

    /// The token to send now: the fleet's current one, or a new one when it is
    /// ``refreshAge`` old (made by this call only if no other instance made it first).
    public func token() async throws -> SharedToken {
        var expected: Int?
        var lastError: VaultError?
        for _ in 0..<4 {
            let now = clock.now()
            let entry = try await kv.readIfPresent(path)
            if let entry, let found = parse(entry), isFresh(found.issuedAt, now: now) { return found }
            // The version a new token replaces: the one read, or (no readable latest version)
            // none, unless a lost write said the entry has deleted versions.
            let cas = entry?.version ?? expected ?? 0
            let token = try await transit.makeProviderToken(
                name: transitKey,
                keyID: keyID,
                teamID: teamID,
                issuedAt: now
            )
            let issuedAt = Int(now.timeIntervalSince1970)
            let data = ["token": token, "iat": String(issuedAt), "key_id": keyID]
            do {
                let version = try await kv.write(path, data: data, cas: cas)
                return SharedToken(
                    token: token,
                    issuedAt: Date(timeIntervalSince1970: TimeInterval(issuedAt)),
                    keyID: keyID,
                    version: version,
                    minted: true
                )
            } catch let error as VaultError where error.code == .casMismatch {
                lastError = error
                // Another instance won: the next read finds its token. When the latest version
                // is deleted there is none to read, and the metadata says what to replace.
                if entry == nil { expected = try? await kv.metadata(path).currentVersion }
            }
        }
        throw lastError ?? VaultError.casMismatch(address: kv.client.address, path: path, expected: expected ?? 0)
    }

    func parse(_ entry: KVEntry) -> SharedToken? {
        guard let token = entry.data["token"], let iat = entry.data["iat"].flatMap({ Int($0) }),
            entry.data["key_id"] == keyID
        else { return nil }
        return SharedToken(
            token: token,
            issuedAt: Date(timeIntervalSince1970: TimeInterval(iat)),
            keyID: keyID,
            version: entry.version,
            minted: false
        )
    }

    func isFresh(_ issuedAt: Date, now: Date) -> Bool {
        let age = now.timeIntervalSince(issuedAt)
        return age >= -Self.clockSkew && age < refreshAge
    }
}
