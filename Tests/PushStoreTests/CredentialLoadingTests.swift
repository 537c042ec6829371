import CredentialFormats
import Foundation
import PushStore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The loading use case as a Swift program calls it: one call for a stored credential by alias
/// (its secret from a real Secret Service: run under scripts/with-secret-service), one for a
/// .p12 with its password in the environment, and the one missing-key check.
@Suite(.serialized)
struct CredentialLoadingTests {
    static func newStore() throws -> CredentialStore {
        CredentialStore(root: URL(fileURLWithPath: try Fixtures.temporaryPath("store")))
    }

    @Test func storedTokenKeyByAliasThroughTheSecretService() async throws {
        let store = try Self.newStore()
        let key = try Fixtures.providerKey()
        _ = try await store.importTokenKey(
            key,
            topics: ["com.example.app"],
            environments: [.sandbox],
            alias: "loader-key",
            source: nil
        )
        defer { SecretTool.clear(store: store.path) }

        let loaded = try await CredentialLoader.load("loader-key", store: store)
        #expect(loaded.isStored && loaded.name == "loader-key" && loaded.kind == .tokenKey)
        #expect(loaded.environments == [.sandbox] && loaded.defaultTopic == "com.example.app")
        // The key came back from the Secret Service whole: it signs as the imported one does.
        #expect(loaded.tokenKey?.keyID == key.keyID && loaded.tokenKey?.teamID == key.teamID)
        #expect(loaded.tokenKey?.publicKeyPEM == key.publicKeyPEM)

        // Started in a task of its own, the load gives the same credential, or the same error.
        let loader = CredentialLoader(store: store)
        let pending = loader.begin("loader-key")
        #expect(pending.argument == "loader-key" && pending.storePath == store.path)
        let early = try await pending.value
        #expect(early.isStored && early.tokenKey?.publicKeyPEM == key.publicKeyPEM)
        #expect(try await loader.begin("loader-key").value.tokenKey?.keyID == key.keyID)
        let missing = await #expect(throws: CredentialError.self) { try await loader.begin("no-such-alias").value }
        #expect(missing?.code == .aliasNotFound)
    }

    @Test func storedCertificateByAliasThroughTheSecretService() async throws {
        let store = try Self.newStore()
        let file = try Fixtures.universal()
        _ = try await store.importCertificate(file, alias: "loader-cert")
        defer { SecretTool.clear(store: store.path) }

        let loaded = try await CredentialLoader.load("loader-cert", store: store)
        #expect(loaded.isStored && loaded.kind == .certificate && loaded.tokenKey == nil)
        #expect(loaded.certificate?.certificate.sha256 == file.certificate.sha256)
        #expect(try loaded.certificate?.clientPrivateKey() == file.privateKeyPKCS8)
    }

    @Test func bundleWithItsPasswordFromTheEnvironment() async throws {
        let name = "APNSCTL_TEST_P12_PASSWORD_\(getpid())"
        setenv(name, "apnsctl-test", 1)
        defer { unsetenv(name) }
        let path = Fixtures.cert("p12/3des-only.p12")

        let loaded = try await CredentialLoader.load(path, store: try Self.newStore(), password: .environment(name))
        #expect(!loaded.isStored && loaded.name == path && loaded.defaultTopic == "com.example.app")
        #expect(loaded.certificate?.privateKeyPKCS8 != nil)

        setenv(name, "not-the-password", 1)
        let wrong = await #expect(throws: CredentialError.self) {
            try await CredentialLoader.load(path, store: try Self.newStore(), password: .environment(name))
        }
        #expect(wrong?.code == .wrongPassword)

        unsetenv(name)
        let unset = await #expect(throws: CredentialError.self) {
            try await CredentialLoader.load(path, store: try Self.newStore(), password: .environment(name))
        }
        #expect(unset?.code == .invalidArgument)
        #expect(unset?.message.contains(name) == true && unset?.message.contains("--") == false)
    }

    @Test func bundleWithItsPasswordFromAFile() async throws {
        let passwordFile = try Fixtures.temporaryFile("password", contents: "apnsctl-test\r\nignored\n")
        let loaded = try await CredentialLoader.load(
            Fixtures.cert("p12/3des-only.p12"),
            store: try Self.newStore(),
            password: .file(passwordFile)
        )
        #expect(loaded.kind == .certificate)
        let missing = await #expect(throws: CredentialError.self) {
            try await CredentialLoader.load(
                Fixtures.cert("p12/3des-only.p12"),
                store: try Self.newStore(),
                password: .file(passwordFile + ".absent")
            )
        }
        #expect(missing?.code == .fileNotFound && missing?.path == passwordFile + ".absent")
    }

    /// Loading, importing and building a client identity refuse a certificate without its key
    /// with the same error, from the one check.
    @Test func missingKeyIsOneError() async throws {
        let path = Fixtures.cert("p12/cert-only.p12")
        let file = try CredentialFile.read(path: path, password: .fixed(Fixtures.password))
        let loading = await #expect(throws: CredentialError.self) {
            try await CredentialLoader.load(path, store: try Self.newStore(), password: .fixed(Fixtures.password))
        }
        let importing = await #expect(throws: CredentialError.self) {
            try await Self.newStore().importCertificate(file, alias: "no-key", force: true)
        }
        let identity = #expect(throws: CredentialError.self) { try file.clientPrivateKey() }
        #expect(loading?.code == .noPrivateKey && loading?.path == path)
        #expect(loading?.message == importing?.message && loading?.message == identity?.message)
        #expect(loading?.hint?.contains("--") == false)
    }
}
