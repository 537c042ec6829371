import Foundation
import TestSupport
import Testing

/// The shared paths, under the name this target's tests use.
typealias Paths = TestPaths

/// The fixture manifest `certs/mint.sh` writes, with what each fixture must report.
struct Manifest: Decodable {
    struct Topic: Decodable, Equatable {
        var topic: String
        var kinds: [String]
    }

    struct Entry: Decodable, CustomTestStringConvertible {
        var path: String
        var format: String
        var password: String?
        var identity: String?
        var environments: [String]?
        var environmentSource: String?
        var topics: [Topic]?
        var bundleId: String?
        var teamID: String?
        var serial: String?
        var notBefore: Date?
        var notAfter: Date?
        var sha256: String?
        var sha1: String?
        var hasKey: Bool?
        var keyMatches: Bool?
        var chainCount: Int?
        var expectedError: String?
        var pushCertificate: Bool?

        // The manifest's `team_id`, read through `.convertFromSnakeCase` as `teamId`.
        enum CodingKeys: String, CodingKey {
            case path, format, password, identity, environments, environmentSource, topics, bundleId
            case serial, notBefore, notAfter, sha256, sha1, hasKey, keyMatches, chainCount, expectedError
            case pushCertificate
            case teamID = "teamId"
        }

        var testDescription: String { path }
    }

    var mintedAt: Date
    var password: String
    var files: [Entry]

    static let shared: Manifest = {
        let url = Paths.certs.appendingPathComponent("manifest.json")
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
    static var certificateFixtures: [Entry] {
        shared.files.filter {
            $0.expectedError == nil && $0.sha256 != nil && ["p12", "pem", "der"].contains($0.format)
        }
    }

    static func entry(_ path: String) -> Entry {
        guard let entry = shared.files.first(where: { $0.path == path }) else {
            fatalError("no fixture \(path) in the manifest")
        }
        return entry
    }
}
