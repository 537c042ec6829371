import CredentialFormats
import Foundation
import PushStore
import TestSupport
import Testing

/// `CredentialStore.export` as a Swift program calls it: a stored credential's secret read back
/// from a real Secret Service (run under scripts/with-secret-service), written as PEM or a new
/// PKCS#12, and read back again by the library's OpenSSL reader.
@Suite(.serialized)
struct ExportTests {
    static func newStore() throws -> CredentialStore {
        CredentialStore(root: URL(fileURLWithPath: try Fixtures.temporaryPath("store")))
    }

    /// The exported bytes in a file of their own, as a person's tool would find them.
    static func written(_ exported: ExportedCredential, as name: String) throws -> String {
        let path = try Fixtures.temporaryPath(name)
        try PrivateFile.write(exported.contents.bytes, to: path, overwrite: false)
        return path
    }

    @Test func certificateAsPEMHoldsTheCertificateAndItsOwnKey() async throws {
        let store = try Self.newStore()
        let file = try Fixtures.universal()
        _ = try await store.importCertificate(file, alias: "export-pem")
        defer { SecretTool.clear(store: store.path) }

        let exported = try await store.export(named: "export-pem", as: .pem)
        #expect(exported.alias == "export-pem" && exported.formatName == "PEM")
        let text = String(decoding: exported.contents.bytes, as: UTF8.self)
        #expect(text.hasPrefix("-----BEGIN CERTIFICATE-----") && text.contains("-----BEGIN PRIVATE KEY-----"))
        let read = try CredentialFile.read(path: try Self.written(exported, as: "app.pem"))
        #expect(read.certificate.sha256 == file.certificate.sha256)
        #expect(try read.clientPrivateKey() == file.privateKeyPKCS8)
    }

    @Test(arguments: [PKCS12Writer.Style.modern, .legacy])
    func certificateAsPKCS12OpensWithTheNewPasswordOnly(style: PKCS12Writer.Style) async throws {
        let store = try Self.newStore()
        let file = try Fixtures.production()
        let alias = "export-p12-\(style.rawValue)"
        _ = try await store.importCertificate(
            path: Fixtures.cert("p12/openssl3-default.p12"),
            password: .fixed(Fixtures.password),
            alias: alias
        )
        defer { SecretTool.clear(store: store.path) }

        let newPassword = SecretBytes("new-secret-pass")
        let exported = try await store.export(named: alias, as: .pkcs12(password: newPassword, style: style))
        #expect(exported.formatName == (style == .legacy ? "legacy PKCS#12" : "PKCS#12"))
        let path = try Self.written(exported, as: "app.p12")
        let read = try CredentialFile.read(path: path, password: .fixed(newPassword))
        #expect(read.format == .pkcs12)
        #expect(read.certificate.sha256 == file.certificate.sha256)
        #expect(read.chain.map(\.sha256) == file.chain.map(\.sha256), "the chain travels with the certificate")
        #expect(try read.clientPrivateKey() == file.privateKeyPKCS8)
        let wrong = #expect(throws: CredentialError.self) {
            try CredentialFile.read(path: path, password: .fixed(Fixtures.password))
        }
        #expect(wrong?.code == .wrongPassword)
    }

    @Test func tokenKeyAsPEMIsItsP8() async throws {
        let store = try Self.newStore()
        let key = try Fixtures.providerKey()
        _ = try await store.importTokenKey(
            key,
            topics: ["com.example.app"],
            environments: [.sandbox],
            alias: "export-key",
            source: nil
        )
        defer { SecretTool.clear(store: store.path) }

        let exported = try await store.export(named: "export-key", as: .pem)
        let path = try Self.written(exported, as: "AuthKey_\(key.keyID).p8")
        let read = try ProviderKey(path: path, teamID: key.teamID, keyID: key.keyID)
        #expect(read.publicKeyPEM == key.publicKeyPEM)
    }

    @Test func refusalsSayWhyAndAskForNoPassword() async throws {
        let store = try Self.newStore()
        _ = try await store.importTokenKey(
            try Fixtures.providerKey(),
            topics: [],
            environments: [],
            alias: "refused-key",
            source: nil
        )
        defer { SecretTool.clear(store: store.path) }
        let untouched = PasswordSource { _ in
            Issue.record("a refused export asked for a new password")
            return SecretBytes("never")
        }

        let missing = await #expect(throws: CredentialError.self) {
            try await store.export(named: "no-such-alias", as: .pkcs12(newPassword: untouched))
        }
        #expect(missing?.code == .aliasNotFound && missing?.alias == "no-such-alias")
        #expect(missing?.message.contains(store.path) == true)

        let tokenKey = await #expect(throws: CredentialError.self) {
            try await store.export(named: "refused-key", as: .pkcs12(newPassword: untouched, style: .legacy))
        }
        #expect(tokenKey?.code == .notExportable && tokenKey?.alias == "refused-key")
        #expect(tokenKey?.hint?.contains("--") == false, "the library's hint names no option")
    }

    @Test func aPKCS12WithoutANewPasswordIsRefused() async throws {
        let store = try Self.newStore()
        _ = try await store.importCertificate(try Fixtures.universal(), alias: "no-password")
        defer { SecretTool.clear(store: store.path) }
        let error = await #expect(throws: CredentialError.self) {
            try await store.export(named: "no-password", as: .pkcs12(newPassword: .none))
        }
        #expect(error?.code == .passwordRequired)
    }

    /// The store never keeps a certificate without its key; a bundle replaced outside it may
    /// hold none. That is an error naming the credential, not a crash.
    @Test func aStoredCertificateWhoseKeyIsGoneIsAnErrorNotACrash() async throws {
        let store = try Self.newStore()
        let imported = try await store.importCertificate(
            path: Fixtures.cert("p12/openssl3-default.p12"),
            password: .fixed(Fixtures.password),
            alias: "keyless"
        )
        defer { SecretTool.clear(store: store.path) }
        let bundle = try #require(imported.credential.bundleFile)
        // The same certificate under the same password, without its key.
        let stored = store.root.appendingPathComponent(bundle).path
        try FileManager.default.removeItem(atPath: stored)
        try FileManager.default.copyItem(atPath: Fixtures.cert("p12/cert-only.p12"), toPath: stored)

        for format in [ExportFormat.pem, .pkcs12(password: SecretBytes("new-secret-pass"))] {
            let error = await #expect(throws: CredentialError.self) {
                try await store.export(named: "keyless", as: format)
            }
            #expect(error?.code == .noPrivateKey && error?.alias == "keyless", "\(format.name)")
        }
    }
}
