import Foundation
import TestSupport
import Testing

@testable import CredentialFormats
@testable import PushChecks
@testable import PushStore
@testable import PushTeam

/// The store's files as they are on disk. Stores written by earlier versions must keep reading,
/// and a change of a Swift property's name must not change a key, so each file is pinned here
/// byte for byte as the store writes it.
struct StoreFormatTests {
    static let index = """
        {
          "credentials" : [
            {
              "alias" : "token-ABC123DEFG",
              "environments" : [
                "sandbox",
                "production"
              ],
              "imported_at" : "2026-11-26T01:50:00Z",
              "key_id" : "ABC123DEFG",
              "kind" : "token_key",
              "public_key_fingerprint" : "5D:21:83:41:64:A5:CA:29:F8:85:56:CE:FE:11:5C:53:37:D8:92:8C:7C:7D:40:0D:0F:2C:C6:18:A1:12:11:09",
              "secret" : "token-key",
              "source" : "AuthKey_ABC123DEFG.p8",
              "team_id" : "ABCDE12345",
              "topics" : [
                "com.example.app"
              ]
            },
            {
              "alias" : "com.example.app-production",
              "bundle_file" : "credentials/com.example.app-production.7b3b6f6e416b.p12",
              "certificate_file" : "credentials/com.example.app-production.7b3b6f6e416b.cert.pem",
              "environments" : [
                "production"
              ],
              "imported_at" : "2026-11-26T01:50:01Z",
              "kind" : "certificate",
              "not_after" : "2027-11-26T00:00:00Z",
              "not_before" : "2026-11-25T00:00:00Z",
              "secret" : "pkcs12-password",
              "sha256" : "7B:3B:6F:6E:41:6B:FD:12:22:D7:A5:B0:8F:DA:1C:3E:9E:F8:F0:F6:5B:6B:EC:64:B7:D8:46:C8:0C:3D:3D:3F",
              "source" : "openssl3-default.p12",
              "subject" : "C=US, O=Example Corp, OU=ABCDE12345, CN=Apple Production IOS Push Services: com.example.app, UID=com.example.app",
              "team_id" : "ABCDE12345",
              "topics" : [
                "com.example.app"
              ]
            }
          ],
          "schema_version" : 1
        }
        """

    static let team = """
        {
          "members" : [
            {
              "added_at" : "2026-11-26T01:50:02Z",
              "name" : "alice",
              "recipient" : "age1tncfdcvk3mncnq4gyf6en973vja6rmhujfjlcffmzwr2mt3lxvfqv35wfu"
            }
          ],
          "schema_version" : 1,
          "team_id" : "0f6c1e52-6d2a-4c57-9a41-6f1f4f0f2b9e"
        }
        """

    @Test func indexEntriesReadTheirTeamAndKeyAndWriteTheSameKeys() throws {
        let index = try ReportSchema.decoder().decode(StoreIndex.self, from: Data(Self.index.utf8))
        let key = try #require(index.credentials.first { $0.kind == .tokenKey })
        #expect(key.keyID == "ABC123DEFG")
        #expect(key.teamID == "ABCDE12345")
        let certificate = try #require(index.credentials.first { $0.kind == .certificate })
        #expect(certificate.teamID == "ABCDE12345")
        #expect(certificate.keyID == nil)

        let written = String(decoding: try ReportSchema.encoder().encode(index), as: UTF8.self)
        #expect(written == Self.index)
    }

    @Test func teamFileReadsItsTeamAndWritesTheSameKeys() throws {
        let team = try ReportSchema.decoder().decode(TeamFile.self, from: Data(Self.team.utf8))
        #expect(team.teamID == "0f6c1e52-6d2a-4c57-9a41-6f1f4f0f2b9e")
        #expect(team.members.map(\.name) == ["alice"])

        let written = String(decoding: try ReportSchema.encoder().encode(team), as: UTF8.self)
        #expect(written == Self.team)
    }

    /// The keys a team ID and key ID take in the JSON reports (validated against docs/schemas
    /// elsewhere): the same snake_case keys as in the index.
    @Test func reportsNameTeamAndKeyInSnakeCase() throws {
        let index = try ReportSchema.decoder().decode(StoreIndex.self, from: Data(Self.index.utf8))
        let key = try #require(index.credentials.first { $0.kind == .tokenKey })
        let checked = CredentialCheck.tokenKey(key, keyPresent: nil, expectations: CheckExpectations())
        let check = try Self.object(checked)
        #expect(check["key_id"] as? String == "ABC123DEFG")
        #expect(check["team_id"] as? String == "ABCDE12345")

        let file = try TokenKeyFile(path: Paths.cert("keys/AuthKey_ABC123DEFG.p8"))
        let report = TokenKeyReport(file, keyIDGiven: false, teamID: "ABCDE12345", topics: [], environments: [])
        let inspected = try Self.object(report)
        #expect(inspected["key_id"] as? String == "ABC123DEFG")
        #expect(inspected["key_id_source"] as? String == "file_name")
        #expect(inspected["team_id"] as? String == "ABCDE12345")
    }

    static func object(_ value: some Encodable) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: ReportSchema.encoder().encode(value)) as? [String: Any])
    }
}
