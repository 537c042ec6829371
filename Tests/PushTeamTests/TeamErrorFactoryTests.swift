import CredentialFormats
import Foundation
import PushCore
import PushStore
import PushTeam
import Testing

/// The team store's factories of ``CredentialError``, declared with the team store: each keeps
/// its code in the JSON shape and says whether it is a refusal.
struct TeamErrorFactoryTests {
    static func json(_ error: some ReportableError) throws -> [String: String] {
        let data = try JSONEncoder().encode(error.reported)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
    }

    @Test func theTeamFactoriesKeepTheirCodesAndRefusals() throws {
        let cases: [(CredentialError, String, FailureKind)] = [
            (
                CredentialError(.notAMember, path: "secrets/prod.age", "Not a recipient.", alias: "prod"),
                "not_a_member", .couldNotCheck
            ),
            (CredentialError(.teamConflict, "Changed on both sides.", alias: "prod"), "team_conflict", .problem),
            (CredentialError(.untrustedMembers, path: "team.json", "Not signed."), "untrusted_members", .problem),
            (CredentialError(.historyRewritten, "Rewritten."), "history_rewritten", .problem),
            (CredentialError(.noSigningKey, "No signing key."), "no_signing_key", .couldNotCheck),
        ]
        for (error, code, failure) in cases {
            #expect(try Self.json(error)["code"] == code)
            #expect(error.failure == failure)
            #expect(error.file == #fileID)
        }
        #expect(cases[0].0.subject == .file("secrets/prod.age"))
        #expect(cases[1].0.subject == .credential("prod"))
    }
}
