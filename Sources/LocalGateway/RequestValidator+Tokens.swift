import CredentialFormats
import Crypto
import Foundation

/// Provider tokens: form, signature, team, age, and the scope of Apple's restricted keys.
extension RequestValidator {
    enum TokenCheck {
        case valid(keyID: String, teamID: String, issuedAt: Int64)
        case rejected(APNsReason)
    }

    /// Checks `bearer <JWT>`: ES256 over a registered key, the key's team, and an age under an hour (nor issued more than an hour ahead).
    func verifyToken(_ authorization: String) -> TokenCheck {
        let verified: VerifiedToken
        if let known = verifiedTokens.withLockedValue({ $0.value(for: authorization) }) {
            verified = known
        } else {
            switch verifySignature(authorization) {
            case .rejected(let reason): return .rejected(reason)
            case .verified(let token):
                verified = token
                verifiedTokens.withLockedValue {
                    $0.insert(token, for: authorization, limit: Self.verifiedTokensLimit)
                }
            }
        }
        let age = clock.now().timeIntervalSince1970 - Double(verified.issuedAt)
        if age > 3_600 { return .rejected(.expiredProviderToken) }
        // Issued more than an hour ahead of the gateway's clock: not a clock a little fast
        // (tolerated, as APNs does) but a token that would otherwise never expire.
        if age < -3_600 { return .rejected(.invalidProviderToken) }
        return .valid(keyID: verified.keyID, teamID: verified.teamID, issuedAt: verified.issuedAt)
    }

    enum SignatureCheck {
        case verified(VerifiedToken)
        case rejected(APNsReason)
    }

    /// The parts of ``verifyToken(_:)`` that do not change with time: form, signature, team.
    func verifySignature(_ authorization: String) -> SignatureCheck {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .rejected(.invalidProviderToken) }
        let segments = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3,
            let headerData = Data(base64URLEncoded: String(segments[0])),
            let claimsData = Data(base64URLEncoded: String(segments[1])),
            let signatureData = Data(base64URLEncoded: String(segments[2]))
        else { return .rejected(.invalidProviderToken) }
        struct Header: Decodable {
            var alg: String
            var kid: String
        }
        struct Claims: Decodable {
            var iss: String
            var iat: Int64
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: headerData), header.alg == "ES256" else {
            return .rejected(.invalidProviderToken)
        }
        if keyScopes, keys[header.kid] == nil, otherEnvironmentKeyIDs.contains(header.kid) {
            // Known here only as a key of the other environment: refused on its key ID alone.
            return .rejected(.badEnvironmentKeyIdInToken)
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: claimsData),
            let key = keys[header.kid],
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            key.publicKey.isValidSignature(signature, for: Data("\(segments[0]).\(segments[1])".utf8))
        else {
            return .rejected(.invalidProviderToken)
        }
        guard claims.iss == key.teamID else { return .rejected(.invalidProviderToken) }
        return .verified(VerifiedToken(keyID: header.kid, teamID: claims.iss, issuedAt: claims.iat))
    }

    /// A valid token's key used outside the environment or the apps it is restricted to.
    func scopeViolation(keyID: String, topic: String) -> APNsReason? {
        guard keyScopes, let key = keys[keyID] else { return nil }
        if let only = key.environment, only != environment { return .badEnvironmentKeyInToken }
        if !key.topics.isEmpty, !TopicScope.tokenKey(key.topics, covers: topic) { return .unrelatedKeyIdInToken }
        return nil
    }
}
