import Foundation
import PushCore

/// How a process keeps its provider token steady: APNs takes a new provider token on a
/// connection about once every 20 minutes (`TooManyProviderTokenUpdates`), and any role that may
/// write `tokens/` could otherwise make every process switch as often as it writes the entry.
extension SharedProviderToken {
    /// The least time between the tokens a process sends with: APNs' limit on token changes.
    public static let minimumTokenInterval: TimeInterval = allowedRefreshAges.lowerBound

    /// Whether the entry's valid token may replace `held`, which is no longer fresh (or nil):
    /// only one issued at least ``minimumTokenInterval`` after it. An older one (a valid token
    /// dated back, written to make the process switch again soon) is replaced by a new one.
    func mayAdopt(_ shared: SharedToken, after held: IssuedProviderToken?) -> Bool {
        guard let held else { return true }
        return shared.issuedAt.timeIntervalSince(held.issuedAt) >= Self.minimumTokenInterval
    }

    /// The entry is missing, old or not valid while this process holds a fresh token: that
    /// token is written back (check-and-set on `current`) rather than a new one signed, and kept.
    /// A process whose policies may not write the entry keeps its token without writing, and so
    /// does one whose write loses the check-and-set: whatever was written meanwhile, its token is
    /// still fresh, and a writer racing every write must not make its sends fail.
    func restore(_ fresh: IssuedProviderToken, over current: Int) async throws -> SharedToken {
        if memory.mayNotWrite { return Self.shared(fresh, keyID: keyID, version: current) }
        do {
            let version = try await kv.write(path, data: fields(fresh), cas: current)
            return Self.shared(fresh, keyID: keyID, version: version)
        } catch let error as VaultError where error.code == .permissionDenied {
            memory.mayNotWrite = true
            return Self.shared(fresh, keyID: keyID, version: current)
        } catch let error as VaultError where error.code == .casMismatch {
            return Self.shared(fresh, keyID: keyID, version: current)
        }
    }

    /// Signs a new token with Transit and writes it with check-and-set on `current`; a role that
    /// may not write the entry sends with it alone. Throws ``VaultError/Code/casMismatch`` when
    /// another instance wrote first, unless `keepIfLost` (the last try): the process then sends
    /// with the token it signed, alone, rather than fail because a writer keeps racing it.
    func mint(now: Date, over current: Int, keepIfLost: Bool = false) async throws -> SharedToken {
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token = try await transit.makeProviderToken(
            name: transitKey,
            keyID: keyID,
            teamID: teamID,
            issuedAt: issuedAt
        )
        let issued = IssuedProviderToken(jwt: token, issuedAt: issuedAt)
        do {
            let version = try await kv.write(path, data: fields(issued), cas: current)
            memory.hold(issued)
            return SharedToken(token: token, issuedAt: issuedAt, keyID: keyID, version: version, minted: true)
        } catch let error as VaultError where error.code == .casMismatch && keepIfLost {
            memory.hold(issued)
            return SharedToken(token: token, issuedAt: issuedAt, keyID: keyID, version: current, minted: true)
        } catch let error as VaultError where error.code == .permissionDenied {
            // This token may read the fleet's entry but not replace it: the process sends with
            // the token it signed until that is old.
            memory.hold(issued)
            memory.mayNotWrite = true
            warn(
                "This process may not replace the shared provider token at \(entryName) at \(kv.client.address) (its policies do not grant \"\(error.subject.capability ?? "update")\" on \(error.subject.path ?? entryName)), so it sends with a token it signed with Transit for itself until that token is as old as the refresh age; a role that mints (docs/vault-policies/reader.hcl) renews the entry."
            )
            return SharedToken(token: token, issuedAt: issuedAt, keyID: keyID, version: current, minted: true)
        }
    }

    /// The entry's fields for `token`.
    func fields(_ token: IssuedProviderToken) -> [String: String] {
        ["token": token.jwt, "iat": String(Int(token.issuedAt.timeIntervalSince1970)), "key_id": keyID]
    }

    /// The token this process holds, as the entry's version `version` stands for it.
    static func shared(_ token: IssuedProviderToken, keyID: String, version: Int) -> SharedToken {
        SharedToken(token: token.jwt, issuedAt: token.issuedAt, keyID: keyID, version: version, minted: false)
    }
}
