import Foundation
import TestSupport
import Testing

@testable import PushStore
@testable import PushTeam

/// Member-list signatures are OpenSSH's SSHSIG, checked both ways against the real
/// `ssh-keygen -Y`, and the rule that moves a clone's trust from one member list to the next.
struct MembershipSigningTests {
    static let namespace = TeamFile.signatureNamespace

    /// A real age recipient (the rule checks recipients' form).
    static func recipient() throws -> String {
        let made = try CLI.runProgram("age-keygen", [])
        let identity = try #require(made.stdout.split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") })
        return try CLI.runProgram("age-keygen", ["-y"], stdin: String(identity) + "\n").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func apnsctlSignaturesVerifyWithSSHKeygen() throws {
        let folder = try TemporaryFolder()
        let key = SigningKey()
        let message = Array("{\"members\":[]}\n".utf8)
        let signature = try key.sign(message, namespace: Self.namespace)
        try Data(message).write(to: URL(fileURLWithPath: folder.path("team.json")))
        try signature.write(toFile: folder.path("team.json.sig"), atomically: true, encoding: .utf8)
        try "alice namespaces=\"\(Self.namespace)\" \(key.publicKey.line)\n"
            .write(toFile: folder.path("allowed"), atomically: true, encoding: .utf8)
        try CLI.runProgram(
            "sh",
            [
                "-c",
                "cd '\(folder.path(""))' && ssh-keygen -Y verify -f allowed -I alice -n \(Self.namespace) -s team.json.sig < team.json",
            ]
        ).succeeded()
        // The same signature over other bytes, or in another namespace, is refused by both.
        let other = try CLI.runProgram(
            "sh",
            [
                "-c",
                "cd '\(folder.path(""))' && echo changed | ssh-keygen -Y verify -f allowed -I alice -n \(Self.namespace) -s team.json.sig",
            ]
        )
        #expect(other.status != 0)
        #expect(!key.publicKey.verifies(signature, of: Array("changed\n".utf8), namespace: Self.namespace))
        #expect(!key.publicKey.verifies(signature, of: message, namespace: "file"))
        #expect(key.publicKey.verifies(signature, of: message, namespace: Self.namespace))
    }

    @Test func theKeptPrivateKeyIsOneSSHKeygenSignsWith() throws {
        let folder = try TemporaryFolder()
        let key = SigningKey()
        let file = folder.path("signing")
        try Data(key.openSSHPrivateKey.bytes).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        let derived = try CLI.runProgram("ssh-keygen", ["-y", "-f", file])
        #expect(derived.stdout.hasPrefix(key.publicKey.line), "\(derived.stdout)\(derived.stderr)")
        try key.publicKey.line.write(toFile: file + ".pub", atomically: true, encoding: .utf8)
        let fingerprint = try CLI.runProgram("ssh-keygen", ["-l", "-f", file + ".pub"])
        #expect(fingerprint.stdout.contains(key.publicKey.fingerprint), "\(fingerprint.stdout)")
        try "the member list\n".write(toFile: folder.path("message"), atomically: true, encoding: .utf8)
        try CLI.runProgram(
            "ssh-keygen",
            ["-Y", "sign", "-f", file, "-n", Self.namespace, folder.path("message")]
        ).succeeded()
        let signature = try String(contentsOfFile: folder.path("message.sig"), encoding: .utf8)
        #expect(key.publicKey.verifies(signature, of: Array("the member list\n".utf8), namespace: Self.namespace))
        let read = try #require(SigningKey(openSSH: key.openSSHPrivateKey))
        #expect(read.publicKey == key.publicKey)
        #expect(SigningKey(openSSH: SecretBytes("AGE-SECRET-KEY-1NOTAKEY")) == nil)
    }

    // MARK: The chain rule

    struct Person {
        var member: TeamFile.Member
        var key: SigningKey
    }

    static func person(_ name: String) throws -> Person {
        let key = SigningKey()
        return Person(
            member: TeamFile.Member(name: name, recipient: try recipient(), signingKey: key.publicKey),
            key: key
        )
    }

    static func list(_ members: [TeamFile.Member], version: Int?, signedBy signer: Person?) throws -> SignedMemberList {
        let team = TeamFile(teamID: "0c4e5a1e-team", version: version, members: members)
        let bytes = try team.encoded()
        let signature = try signer.map { try $0.key.sign(bytes, namespace: namespace) }
        return SignedMemberList(bytes: bytes, signature: signature, commit: UUID().uuidString)
    }

    @Test func signedChangesAreTakenAndEveryAttackIsRefused() throws {
        let alice = try Self.person("alice")
        let bob = try Self.person("bob")
        let carol = try Self.person("carol")
        let mallory = try Self.person("mallory")
        let genesis = try Self.list([alice.member], version: 1, signedBy: alice)
        let withBob = try Self.list([alice.member, bob.member], version: 2, signedBy: alice)
        let withoutBob = try Self.list([alice.member], version: 3, signedBy: alice)

        // From nothing: the founder's list, then each change signed by a member of the list before.
        let joined = MembershipChain.evaluate(anchor: nil, candidates: [genesis, withBob])
        #expect(joined.trusted == withBob && joined.pending == nil && joined.accepted.count == 2)
        #expect(joined.accepted.last?.signer.name == "alice")
        #expect(joined.accepted.last?.difference.added.map(\.name) == ["bob"])
        // Carol added by bob, who was added by alice: a chain of trust.
        let byBob = try Self.list([alice.member, bob.member, carol.member], version: 3, signedBy: bob)
        #expect(MembershipChain.evaluate(anchor: genesis, candidates: [withBob, byBob]).trusted == byBob)

        func refused(_ candidate: SignedMemberList, from anchor: SignedMemberList, _ words: String) {
            let evaluation = MembershipChain.evaluate(anchor: anchor, candidates: [candidate])
            #expect(evaluation.trusted == anchor, "\(words)")
            #expect(evaluation.pending?.reason.contains(words) == true, "\(evaluation.pending?.reason ?? "none")")
        }
        // A removed member re-adds themselves with their own (once trusted) key.
        refused(
            try Self.list([alice.member, bob.member], version: 4, signedBy: bob),
            from: withoutBob,
            "signed by bob"
        )
        // A non-member adds themselves: unsigned, or signed by their own key.
        refused(
            try Self.list([alice.member, mallory.member], version: 4, signedBy: nil),
            from: withoutBob,
            "not signed"
        )
        refused(
            try Self.list([alice.member, mallory.member], version: 4, signedBy: mallory),
            from: withoutBob,
            "who is not a trusted member"
        )
        refused(
            try Self.list([alice.member], version: 4, signedBy: mallory),
            from: withoutBob,
            "the key of no trusted member"
        )
        // A replaced recipient, unsigned.
        var replaced = alice.member
        replaced.recipient = mallory.member.recipient
        refused(try Self.list([replaced], version: 4, signedBy: nil), from: withoutBob, "not signed")
        // An old list signed while bob was a member, pushed back.
        refused(withBob, from: withoutBob, "does not follow")
        // Even a trusted signer cannot make an empty list, or name someone twice, or a bad recipient.
        refused(try Self.list([], version: 4, signedBy: alice), from: withoutBob, "no members")
        var twin = bob.member
        twin.name = "alice"
        refused(
            try Self.list([alice.member, twin], version: 4, signedBy: alice),
            from: withoutBob,
            "names alice twice"
        )
        var broken = bob.member
        broken.recipient = "age1notarecipient"
        refused(
            try Self.list([alice.member, broken], version: 4, signedBy: alice),
            from: withoutBob,
            "recipient of bob"
        )
        // Bytes changed after signing.
        var tampered = try Self.list([alice.member, carol.member], version: 4, signedBy: alice)
        tampered.bytes = try TeamFile(teamID: "0c4e5a1e-team", version: 4, members: [alice.member, mallory.member])
            .encoded()
        refused(tampered, from: withoutBob, "does not match")
    }

    @Test func twoSignedChangesMergedAndSignedAgainAreTaken() throws {
        let alice = try Self.person("alice")
        let bob = try Self.person("bob")
        let carol = try Self.person("carol")
        let dave = try Self.person("dave")
        let base = try Self.list([alice.member, bob.member], version: 2, signedBy: alice)
        let aliceSide = try Self.list([alice.member, bob.member, carol.member], version: 3, signedBy: alice)
        let bobSide = try Self.list([alice.member, bob.member, dave.member], version: 3, signedBy: bob)
        let merged = try Self.list([alice.member, bob.member, carol.member, dave.member], version: 4, signedBy: bob)
        let evaluation = MembershipChain.evaluate(anchor: base, candidates: [aliceSide, bobSide, merged])
        #expect(evaluation.trusted == merged)
        #expect(evaluation.pending == nil)
    }

    @Test func anUnsignedStoreIsTakenAsItStandsUntilItsFirstSignedList() throws {
        let alice = try Self.person("alice")
        var plain = alice.member
        plain.signingKey = nil
        let legacy = try Self.list([plain], version: nil, signedBy: nil)
        let signed = try Self.list([alice.member], version: 1, signedBy: alice)
        let evaluation = MembershipChain.evaluate(anchor: nil, candidates: [legacy, signed])
        #expect(evaluation.trusted == signed && evaluation.pending == nil)
        // After it, an unsigned list is refused like any other.
        let mallory = try Self.person("mallory")
        let after = MembershipChain.evaluate(
            anchor: signed,
            candidates: [try Self.list([alice.member, mallory.member], version: nil, signedBy: nil)]
        )
        #expect(after.trusted == signed && after.pending != nil)
    }
}
