import CredentialFormats
import Foundation
import PushChecks
import PushStore
import TestSupport
import Testing

/// Loading the credential a person names: files, token keys, and what they predict.
struct CredentialLoaderTests {
    /// A loader over an empty store in a new folder (nothing here touches the Secret Service).
    static func loader(
        password: PasswordSource = .none,
        teamID: String? = nil,
        keyID: String? = nil
    ) throws -> CredentialLoader {
        let folder = URL(fileURLWithPath: try Fixtures.temporaryFile("store")).path
        return CredentialLoader(
            store: CredentialStore(root: URL(fileURLWithPath: folder)),
            password: password,
            teamID: teamID,
            keyID: keyID
        )
    }

    @Test func bundleFileWithItsPassword() async throws {
        let loaded = try await Self.loader(password: .fixed(Fixtures.password)).load(Fixtures.cert("p12/3des-only.p12"))
        #expect(loaded.kind == .certificate)
        #expect(loaded.name == Fixtures.cert("p12/3des-only.p12"))
        #expect(Set(loaded.environments) == [.sandbox, .production])
        #expect(loaded.defaultTopic == "com.example.app")
        #expect(loaded.defaultTopic(for: .voip) == "com.example.app.voip")
        #expect(loaded.defaultTopic(for: .alert) == "com.example.app")
        #expect(loaded.tokenKey == nil && loaded.certificate?.privateKeyPKCS8 != nil)
    }

    @Test func voipCertificateKeepsItsOwnSuffix() async throws {
        let loaded = try await Self.loader(password: .fixed(Fixtures.password)).load(Fixtures.cert("p12/voip.p12"))
        #expect(loaded.defaultTopic(for: .voip) == "com.example.app.voip")
    }

    @Test func bundleWithoutPasswordSaysSoWithoutNamingOptions() async throws {
        let error = await #expect(throws: CredentialError.self) {
            try await Self.loader().load(Fixtures.cert("p12/3des-only.p12"))
        }
        #expect(error?.code == .passwordRequired)
        #expect(error?.hint?.contains("--") == false)
    }

    @Test func certificateWithoutKeyCannotAuthenticate() async throws {
        let error = await #expect(throws: CredentialError.self) {
            try await Self.loader(password: .fixed(Fixtures.password)).load(Fixtures.cert("p12/cert-only.p12"))
        }
        #expect(error?.code == .noPrivateKey)
    }

    @Test func tokenKeyNeedsItsTeamID() async throws {
        let p8 = Fixtures.cert("keys/AuthKey_ABC123DEFG.p8")
        let missing = await #expect(throws: CredentialError.self) { try await Self.loader().load(p8) }
        #expect(missing?.code == .teamIDRequired)
        #expect(missing?.hint?.contains("--") == false)
        let invalid = await #expect(throws: PushCoreError.self) { try await Self.loader(teamID: "abc").load(p8) }
        #expect(invalid?.code == .invalidTeamID)
        #expect(invalid?.hint?.contains("--") == false)

        let loaded = try await Self.loader(teamID: Fixtures.teamID).load(p8)
        #expect(loaded.kind == .tokenKey && loaded.certificate == nil && loaded.defaultTopic == nil)
        guard let key = loaded.tokenKey else {
            Issue.record("not a token credential")
            return
        }
        #expect(key.keyID == "ABC123DEFG" && key.teamID == Fixtures.teamID)
    }

    @Test func keyIDMustComeFromTheNameOrBeGiven() async throws {
        let renamed = try Fixtures.temporaryFile(
            "key.p8",
            contents: try String(contentsOfFile: Fixtures.cert("keys/AuthKey_ABC123DEFG.p8"), encoding: .utf8)
        )
        let error = await #expect(throws: CredentialError.self) {
            try await Self.loader(teamID: Fixtures.teamID).load(renamed)
        }
        #expect(error?.code == .keyIDRequired)
        #expect(error?.hint?.contains("--") == false)
        let loaded = try await Self.loader(teamID: Fixtures.teamID, keyID: "ZYX987WVUT").load(renamed)
        guard let key = loaded.tokenKey else {
            Issue.record("not a token credential")
            return
        }
        #expect(key.keyID == "ZYX987WVUT")
    }

    @Test func unknownNameIsAliasNotFound() async throws {
        let error = await #expect(throws: CredentialError.self) { try await Self.loader().load("no-such-alias") }
        #expect(error?.code == .aliasNotFound)
        #expect(error?.alias == "no-such-alias")
        #expect(error?.hint?.contains("apnsctl") == false)
    }

    @Test func preflightFindingsForCertificatesAndTokenKeys() throws {
        let production = try LoadedCredential(name: "prod", file: try Fixtures.production())
        #expect(production.preflightFindings(environment: .production, topic: "com.example.app").isEmpty)
        #expect(
            production.preflightFindings(environment: .sandbox, topic: "com.example.app").map(\.code.rawValue).contains(
                "environment_mismatch"
            )
        )

        let key = LoadedCredential(
            name: "key",
            key: try Fixtures.providerKey(),
            environments: [.sandbox],
            topics: ["com.example.app"]
        )
        #expect(key.preflightFindings(environment: .sandbox, topic: "com.example.app").isEmpty)
        let other = key.preflightFindings(environment: .production, topic: "com.example.other").map(\.code.rawValue)
        #expect(other == ["environment_mismatch", "topic_not_covered"])
        // A key imported for no particular environment or topic predicts nothing.
        let bare = LoadedCredential(name: "bare", key: try Fixtures.providerKey())
        #expect(bare.preflightFindings(environment: .production, topic: "anything").isEmpty)

        let expired = try LoadedCredential(
            name: "old",
            file: try CredentialFile.read(path: Fixtures.cert("p12/expired.p12"), password: .fixed(Fixtures.password))
        )
        #expect(expired.preflightFindings(environment: .sandbox, topic: nil).map(\.code.rawValue).contains("expired"))
    }

    @Test func mismatchedKeyIsRefused() throws {
        let file = try CredentialFile.read(
            path: Fixtures.cert("p12/mismatched-key.p12"),
            password: .fixed(Fixtures.password)
        )
        let error = #expect(throws: CredentialError.self) { try LoadedCredential(name: "m", file: file) }
        #expect(error?.code == .keyMismatch)
    }
}
