import Crypto
import Foundation
import PushCore

/// What a shared token entry is worth.
enum SharedTokenVerdict {
    /// A token of this key, signed by it and young enough: send with it.
    case valid(SharedToken)
    /// A token of this key that is ``SharedProviderToken/refreshAge`` old: replace it.
    case old
    /// Not a token this key made, or one APNs refused: never sent; the reason, for a warning.
    case refused(String)
}

extension SharedProviderToken {
    /// Judges the entry as the fleet's token: its `key_id` and `iat` fields; the JWT's header
    /// (`alg` ES256, `kid` this key ID) and claims (`iss` this team ID, `iat` the field's);
    /// its ES256 signature by the key's public key; its age (no more than a minute in the
    /// future, younger than ``refreshAge``); and that APNs did not refuse it.
    func verify(_ entry: KVEntry, now: Date) async throws -> SharedTokenVerdict {
        guard let jwt = entry.data["token"], let field = entry.data["iat"] else {
            return .refused("it has no \"token\" or \"iat\" field")
        }
        guard entry.data["key_id"] == keyID else {
            return .refused("its key_id is \"\(entry.data["key_id"] ?? "")\", not \(keyID)")
        }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let header = Self.object(parts[0]), let claims = Self.object(parts[1]),
            let signature = Data(base64URLEncoded: String(parts[2])), signature.count == 64
        else { return .refused("its token is not a JWT with an ES256 signature") }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == keyID else {
            return .refused("its token is not for the key \(keyID) (its header names \(header["kid"] ?? "no key"))")
        }
        guard claims["iss"] as? String == teamID else {
            return .refused("its token is not issued by the team \(teamID) (iss \(claims["iss"] ?? "missing"))")
        }
        guard let iat = (claims["iat"] as? Int) ?? (claims["iat"] as? NSNumber)?.intValue, String(iat) == field else {
            return .refused("its iat field (\(field)) is not the token's own iat")
        }
        let issuedAt = Date(timeIntervalSince1970: TimeInterval(iat))
        if issuedAt.timeIntervalSince(now) > Self.clockSkew {
            return .refused("it is dated \(Int(issuedAt.timeIntervalSince(now))) s in the future")
        }
        // An old token is replaced whoever signed it: its signature need not be checked.
        guard isFresh(issuedAt, now: now) else { return .old }
        if memory.isRejected(jwt) { return .refused("APNs answered InvalidProviderToken to it") }
        let key = try await publicKeyForVerifying()
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return .refused("its signature is not one of the key \(keyID) (forged, or signed by another key)") }
        return .valid(SharedToken(token: jwt, issuedAt: issuedAt, keyID: keyID, version: entry.version, minted: false))
    }

    /// The public key shared tokens are checked against: the one given, else the Transit key's
    /// latest version's, read once.
    func publicKeyForVerifying() async throws -> P256.Signing.PublicKey {
        if let known = memory.knownPublicKey { return known }
        let info = try await transit.keyInfo(name: transitKey)
        guard let pem = info.publicKeys[info.latestVersion],
            let key = try? P256.Signing.PublicKey(pemRepresentation: pem)
        else {
            throw VaultError.badResponse(
                address: kv.client.address,
                path: "\(transit.mount)/keys/\(transitKey)",
                reason: "no P-256 public key for the latest version, to verify shared provider tokens with"
            )
        }
        memory.knownPublicKey = key
        return key
    }

    /// A JWT part's JSON object.
    private static func object(_ part: Substring) -> [String: Any]? {
        guard let data = Data(base64URLEncoded: String(part)) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }
}
