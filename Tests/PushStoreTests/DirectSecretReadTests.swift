import CredentialFormats
import Foundation
import PushCore
import TestSupport
import Testing

@testable import PushStore

/// The one-item read with plain D-Bus calls and an encrypted session of our own (BoringSSL's
/// Diffie-Hellman, not libsecret's), against the real gnome-keyring of
/// scripts/with-secret-service: every session's key must agree with the daemon's, sessions are
/// closed, and what is not the plain case is left to the read that explains it.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["APNSCTL_INSIDE_SECRET_SERVICE"] == "1",
        "needs the private Secret Service of scripts/with-secret-service"
    ),
    .serialized
)
struct DirectSecretReadTests {
    /// A shared value with a leading zero byte (one exchange in 256) is where an encoding that
    /// differs from gnome-keyring's shows: 1,500 fresh sessions miss such a value with a chance
    /// of about 0.3 %. (An earlier draft without the padding failed here 5 times in 1,500.)
    @Test func everySessionAgreesWithTheDaemon() throws {
        let folder = try TemporaryFolder()
        let secrets = LibSecretStore()
        let item = SecretItem(store: folder.path("store"), alias: "key", kind: .tokenKey, identifier: "KEY0000001")
        // Bytes of every value, and a length that is not a multiple of the cipher's block.
        let stored = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try secrets.store(SecretBytes(stored), for: item)
        defer { _ = try? secrets.remove(item) }
        #expect(secrets.directLookup(item)?.bytes == stored)
        let connection = try SessionBusConnection.shared(timeout: 10)
        let encoded = Array(Data(stored).base64EncodedString().utf8)
        let path = try #require(try SecretTool.itemPath(of: item))
        var failures = 0
        for _ in 0..<1_500 {
            guard let opened = secrets.openSession(on: connection) else {
                failures += 1
                continue
            }
            if secrets.secrets(at: [path], in: opened)[path] != encoded { failures += 1 }
            LibSecretStore.close(opened)
        }
        #expect(failures == 0)
    }

    @Test func aPasswordReadsAsTheLibSecretLookupGivesIt() throws {
        let folder = try TemporaryFolder()
        let secrets = LibSecretStore()
        let item = SecretItem(store: folder.path("store"), alias: "bundle", kind: .pkcs12Password, identifier: "ab12")
        // Exactly one cipher block of text: PKCS#7 then adds a whole block of padding.
        let password = "sixteen bytes ün"
        try secrets.store(SecretBytes(password), for: item)
        defer { _ = try? secrets.remove(item) }
        #expect(secrets.directLookup(item)?.bytes == Array(password.utf8))
        #expect(try secrets.lookup(item)?.bytes == Array(password.utf8))
    }

    /// Not the plain case: nothing is answered directly, and the public lookup still says what
    /// it always said.
    @Test func whatIsNotThePlainCaseIsLeftToTheLookupThatExplains() throws {
        let folder = try TemporaryFolder()
        let secrets = LibSecretStore()
        let store = folder.path("store")
        let missing = SecretItem(store: store, alias: "missing", kind: .tokenKey, identifier: "KEY0000002")
        #expect(secrets.directLookup(missing) == nil)
        #expect(try secrets.lookup(missing) == nil)

        let damaged = SecretItem(store: store, alias: "damaged", kind: .tokenKey, identifier: "KEY0000003")
        try SecretTool.store("not base64 !", for: damaged)
        defer { _ = try? secrets.remove(damaged) }
        #expect(secrets.directLookup(damaged) == nil)
        #expect(throws: CredentialError.self) { try secrets.lookup(damaged) }

        let claimed = SecretItem(store: store, alias: "claimed", kind: .tokenKey, identifier: "KEY0000004")
        try secrets.store(SecretBytes([1, 2, 3]), for: claimed)
        try SecretTool.store("BAgI", for: claimed, extra: [("note", "a copy")])
        defer { _ = try? secrets.remove(claimed) }
        #expect(secrets.directLookup(claimed) == nil)
    }

    /// One key exchange per process, as libsecret keeps one session: reads after the first
    /// open no session of their own, so a long-running exporter leaves none behind.
    @Test func aProcessKeepsOneSession() throws {
        let folder = try TemporaryFolder()
        let secrets = LibSecretStore()
        let item = SecretItem(store: folder.path("store"), alias: "key", kind: .tokenKey, identifier: "KEY0000005")
        try secrets.store(SecretBytes([9, 8, 7]), for: item)
        defer { _ = try? secrets.remove(item) }
        #expect(secrets.directLookup(item)?.bytes == [9, 8, 7])
        let before = try SecretTool.openSessions()
        for _ in 0..<60 { #expect(secrets.directLookup(item)?.bytes == [9, 8, 7]) }
        let after = try SecretTool.openSessions()
        // A session per read would leave 60 more; a few more are other programs' (test processes
        // that run beside this suite, each with a session of its own while it lives).
        #expect(after - before < 30, "sessions open before: \(before), after 60 reads: \(after)")
    }
}
