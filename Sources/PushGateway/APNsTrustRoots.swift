import CredentialFormats
import Foundation
import PushCore

/// A root certificate authority APNs' server certificates chain to, with the dates Apple gave.
public struct APNsTrustRoot: Sendable, Codable, Equatable {
    /// The root's common name, as Apple names it.
    public var name: String
    /// The root's subject, as swift-certificates prints a distinguished name.
    public var subject: String
    /// SHA-256 of the root's SubjectPublicKeyInfo (DER), lower-case hex: the key, whichever
    /// certificate (self-signed or cross-signed) carries it.
    public var spkiSHA256: String
    /// When APNs' sandbox servers started to chain to this root.
    public var sandboxSince: Date
    /// When APNs' production servers started to chain to this root.
    public var productionSince: Date
    /// Where the dates come from.
    public var source: String

    /// When servers of `environment` started to chain to this root.
    public func since(_ environment: PushEnvironment) -> Date {
        environment == .production ? productionSince : sandboxSince
    }
}

/// Every root APNs has chained to since the HTTP/2 API's current servers, oldest first: the
/// one table the trust-store check, the handshake's anchor and the metric read. When Apple
/// announces the next root, adding it here (with its dates) is the whole change: until its
/// date it is the upcoming root a trust store should already hold, from its date the current one.
public enum APNsTrustRoots {
    public static let table: [APNsTrustRoot] = [
        APNsTrustRoot(
            name: "AAA Certificate Services",
            subject: "CN=AAA Certificate Services,O=Comodo CA Limited,L=Salford,ST=Greater Manchester,C=GB",
            spkiSHA256: "bd153ed7b0434f6886b17bce8bbe84ed340c7132d702a8f4fa318f756ecbd6f3",
            sandboxSince: day(2021, 3, 29),
            productionSince: day(2021, 3, 29),
            source:
                "Apple Developer News, \"Apple Push Notification service server certificate update\" (2021): GeoTrust Global CA replaced on 29 March 2021"
        ),
        APNsTrustRoot(
            name: "USERTrust RSA Certification Authority",
            subject:
                "CN=USERTrust RSA Certification Authority,O=The USERTRUST Network,L=Jersey City,ST=New Jersey,C=US",
            spkiSHA256: "c784333d20bcd742b9fdc3236f4e509b8937070e73067e254dd3bf9c45bf4dde",
            sandboxSince: day(2025, 1, 20),
            productionSince: day(2025, 2, 24),
            source:
                "Apple Developer News, \"Apple Push Notification service server certificate update\" (2024): sandbox on 20 January 2025, production on 24 February 2025; token-auth providers need it too (Apple Developer Forums, thread 773306)"
        ),
    ]

    /// The root servers of `environment` chain to at `date`.
    public static func current(_ environment: PushEnvironment, at date: Date = Date()) -> APNsTrustRoot? {
        table.filter { $0.since(environment) <= date }.max { $0.since(environment) < $1.since(environment) }
    }

    /// A root announced for a later date than `date`, which a trust store should already hold.
    public static func upcoming(_ environment: PushEnvironment, at date: Date = Date()) -> APNsTrustRoot? {
        table.filter { $0.since(environment) > date }.min { $0.since(environment) < $1.since(environment) }
    }

    /// The table's root with this key, if any.
    public static func root(spkiSHA256: String) -> APNsTrustRoot? {
        table.first { $0.spkiSHA256 == spkiSHA256.lowercased() }
    }

    /// Midnight UTC of the day, by arithmetic: the table is read by every handshake, and a
    /// `Calendar` here cost a cold `send` about a millisecond (docs/performance.md).
    static func day(_ year: Int, _ month: Int, _ day: Int) -> Date {
        PushTime.utcMidnight(year: year, month: month, day: day)!
    }
}
