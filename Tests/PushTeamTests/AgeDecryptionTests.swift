import Foundation
import PushStore
import Testing

@testable import PushTeam

/// Why age could not decrypt is decided from facts (the file's header, the identity, the
/// stanzas' tags), with the real age and age-keygen, never from age's words.
struct AgeDecryptionTests {
    let age = AgeTool()

    /// What a decryption became, as a word a test compares.
    func outcome(_ file: [UInt8], _ identity: SecretBytes) async throws -> String {
        switch try await age.decrypt(file, identity: identity) {
        case .decrypted(let secret): return "decrypted:" + String(decoding: secret.bytes, as: UTF8.self)
        case .notARecipient: return "notARecipient"
        case .badIdentity: return "badIdentity"
        case .damaged: return "damaged"
        }
    }

    @Test func aRecipientDecryptsAndAnyOtherIdentityIsNotOne() async throws {
        let alice = try await age.generateIdentity()
        let bob = try await age.generateIdentity()
        let file = try await age.encrypt(SecretBytes("secret"), to: [alice.recipient])
        #expect(try await outcome(file, alice.identity) == "decrypted:secret")
        #expect(try await outcome(file, bob.identity) == "notARecipient")
        #expect(AgeHeader(file)?.stanzas.map { $0.first } == ["X25519"])
    }

    @Test func aFileThatIsNotAgeIsDamagedWhateverTheIdentity() async throws {
        let alice = try await age.generateIdentity()
        let notAge = Array("-----BEGIN CERTIFICATE-----\nMIIB\n".utf8)
        #expect(AgeHeader(notAge) == nil)
        #expect(try await outcome(notAge, alice.identity) == "damaged")
        #expect(try await outcome(notAge, SecretBytes("AGE-SECRET-KEY-1NOTONE")) == "damaged")
        // A version line with no stanza, or no MAC line, is not a header.
        #expect(AgeHeader(Array("age-encryption.org/v1\n--- abc\n".utf8)) == nil)
        #expect(AgeHeader(Array("age-encryption.org/v1\n-> X25519 abc\nbody\n".utf8)) == nil)
    }

    @Test func anIdentityAgeCannotReadIsABadIdentity() async throws {
        let alice = try await age.generateIdentity()
        let file = try await age.encrypt(SecretBytes("secret"), to: [alice.recipient])
        #expect(try await outcome(file, SecretBytes("AGE-SECRET-KEY-1NOTONE")) == "badIdentity")
        #expect(try await outcome(file, SecretBytes("identity.txt")) == "badIdentity")
    }

    @Test func anSSHIdentityIsToldFromItsTag() async throws {
        let member = SigningKey()
        let other = SigningKey()
        var file = try await age.encrypt(SecretBytes("secret"), to: [member.publicKey.line])
        let tag = AgeIdentityKind.tag(of: member.publicKey)
        #expect(AgeHeader(file)?.mayBeFor(.sshEd25519(tag: tag)) == true)
        #expect(try await outcome(file, member.openSSHPrivateKey) == "decrypted:secret")
        #expect(try await outcome(file, other.openSSHPrivateKey) == "notARecipient")
        // The payload damaged after the header: the member's own stanza is there, so it is damaged.
        file[file.count - 1] ^= 0xFF
        #expect(try await outcome(file, member.openSSHPrivateKey) == "damaged")
        #expect(try await outcome(file, other.openSSHPrivateKey) == "notARecipient")
    }
}
