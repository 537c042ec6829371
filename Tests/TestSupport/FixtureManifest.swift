import Foundation
import Testing

/// The fixture manifest `certs/mint.sh` writes, with what each fixture must report: the test
/// PKI's committed part, described.
public struct Manifest: Decodable, Sendable {
    public struct Topic: Decodable, Equatable, Sendable {
        public var topic: String
        public var kinds: [String]
        public init(topic: String, kinds: [String]) {
            self.topic = topic
            self.kinds = kinds
        }
    }

    public struct Entry: Decodable, Sendable, CustomTestStringConvertible {
        public var path: String
        public var format: String
        public var password: String?
        public var identity: String?
        public var environments: [String]?
        public var environmentSource: String?
        public var topics: [Topic]?
        public var bundleId: String?
        public var teamID: String?
        public var serial: String?
        public var notBefore: Date?
        public var notAfter: Date?
        public var sha256: String?
        public var sha1: String?
        public var hasKey: Bool?
        public var keyMatches: Bool?
        public var chainCount: Int?
        public var expectedError: String?
        public var pushCertificate: Bool?

        // The manifest's `team_id`, read through `.convertFromSnakeCase` as `teamId`.
        enum CodingKeys: String, CodingKey {
            case path, format, password, identity, environments, environmentSource, topics, bundleId
            case serial, notBefore, notAfter, sha256, sha1, hasKey, keyMatches, chainCount, expectedError
            case pushCertificate
            case teamID = "teamId"
        }

        public var testDescription: String { path }
    }

    public var mintedAt: Date
    public var password: String
    public var files: [Entry]

    public static let shared: Manifest = {
        let url = TestPaths.certs.appendingPathComponent("manifest.json")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(Manifest.self, from: Data(contentsOf: url))
        } catch {
            fatalError("certs/manifest.json cannot be read (\(error)); run certs/mint.sh")
        }
    }()

    /// Fixtures that hold a readable certificate.
    public static var certificateFixtures: [Entry] {
        shared.files.filter {
            $0.expectedError == nil && $0.sha256 != nil && ["p12", "pem", "der"].contains($0.format)
        }
    }

    public static func entry(_ path: String) -> Entry {
        guard let entry = shared.files.first(where: { $0.path == path }) else {
            fatalError("no fixture \(path) in the manifest")
        }
        return entry
    }
}
