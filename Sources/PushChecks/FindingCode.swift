import Foundation
import PushStore

/// What a ``Finding`` is, as reports, JSON and metrics give it (`topic_not_covered`). Each code
/// is declared once, here; the modules that judge, explain or count findings name these.
public struct FindingCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    // MARK: A certificate's dates

    /// Past its end: APNs refuses it.
    public static let expired = FindingCode("expired")
    /// Within the warning days of its end.
    public static let expiring = FindingCode("expiring")
    /// Before its start: APNs refuses it for now.
    public static let notYetValid = FindingCode("not_yet_valid")

    // MARK: What a credential serves

    /// Not for the environment asked about.
    public static let environmentMismatch = FindingCode("environment_mismatch")
    /// Its environments are not known (no Apple extension; a token key not told).
    public static let environmentUnknown = FindingCode("environment_unknown")
    /// Does not cover the topic asked about.
    public static let topicNotCovered = FindingCode("topic_not_covered")
    /// A token key whose topics or environments were never recorded.
    public static let tokenMetadataIncomplete = FindingCode("token_metadata_incomplete")

    // MARK: The certificate and its key

    /// The private key is not the certificate's.
    public static let keyMismatch = FindingCode("key_mismatch")
    /// The certificate is not an APNs certificate.
    public static let notPushCertificate = FindingCode("not_push_certificate")

    // MARK: The store

    /// The credential's secret is not in the Secret Service.
    public static let secretMissing = FindingCode("secret_missing")
    /// The Secret Service could not be asked, so the secret was not verified.
    public static let secretUnverified = FindingCode("secret_unverified")
    /// The secret was read, and is not the one the index names (a replaced or damaged age file,
    /// or a link where a secret's file should be).
    public static let secretTampered = FindingCode("secret_tampered")
    /// A Secret Service item of the store that no credential uses.
    public static let orphanedSecret = FindingCode("orphaned_secret")
    /// A file in the store's credentials folder that no credential uses.
    public static let unaccountedFile = FindingCode("unaccounted_file")
}
