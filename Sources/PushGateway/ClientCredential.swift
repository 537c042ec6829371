import Foundation
import NIOConcurrencyHelpers
import PushCredentials

/// How the connection proves who it is to APNs.
public enum ClientCredential: Sendable {
    /// TLS client authentication with a push certificate. `privateKey` is the PKCS#8 DER of the
    /// key (``CredentialFile/privateKeyPKCS8``); `chainDER` holds intermediates to present.
    case certificate(certificateDER: [UInt8], chainDER: [[UInt8]], privateKey: SecretBytes)
    /// Token authentication: an ES256 JWT in the `authorization` header of every request.
    case token(ProviderKey)
    /// No credential: for probing a gateway's TLS and HTTP/2 only (APNs answers 403
    /// MissingProviderToken to any notification).
    case none

    /// Builds a certificate credential from a credential file that holds a key.
    public static func certificate(_ file: CredentialFile) throws -> ClientCredential {
        guard let key = file.privateKeyPKCS8 else {
            throw GatewayError(.invalidCredential, "\(file.path) holds no private key, so it cannot authenticate a connection.",
                               hint: "Export the certificate together with its private key (a .p12 from Keychain Access).")
        }
        return .certificate(certificateDER: file.certificate.der, chainDER: file.chain.map(\.der), privateKey: key)
    }
}

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
final class ProviderTokenCache: Sendable {
    /// Renewal age: inside APNs' window of 20 to 60 minutes.
    static let defaultRenewAfter: TimeInterval = 50 * 60

    private struct State {
        var token: String?
        var issuedAt: Date?
        var renewals = 0
    }

    let key: ProviderKey
    let clock: GatewayClock
    let renewAfter: TimeInterval
    private let state = NIOLockedValueBox(State())

    init(key: ProviderKey, clock: GatewayClock, renewAfter: TimeInterval = ProviderTokenCache.defaultRenewAfter) {
        self.key = key
        self.clock = clock
        self.renewAfter = renewAfter
    }

    /// The current token, made anew when there is none or it is ``renewAfter`` old (or the clock
    /// went backwards).
    func token() throws -> String {
        let now = clock.now()
        return try state.withLockedValue { state in
            if let token = state.token, let issuedAt = state.issuedAt,
               now >= issuedAt, now.timeIntervalSince(issuedAt) < renewAfter {
                return token
            }
            let token = try key.makeJWT(issuedAt: now)
            state.token = token
            state.issuedAt = now
            state.renewals += 1
            return token
        }
    }

    /// When the cached token was issued (nil before the first request).
    var issuedAt: Date? { state.withLockedValue { $0.issuedAt } }
    /// How many tokens were made so far.
    var tokensMade: Int { state.withLockedValue { $0.renewals } }
}
