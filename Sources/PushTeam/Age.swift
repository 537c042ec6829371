import CredentialFormats
import Foundation
import PushStore

/// The `age` and `age-keygen` tools (age-encryption.org/v1), run as subprocesses: every member
/// can check a secret with the same standard tool, and apnsctl holds no cryptography of its own.
public struct AgeTool: Sendable {
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    func program(_ name: String) throws -> String {
        guard let path = Subprocess.locate(name, environment: environment) else {
            throw CredentialError(
                .teamError,
                path: nil,
                "The \(name) program is not installed; a team store's secrets are encrypted with age.",
                hint: "Install age (Debian and Ubuntu: apt-get install age)."
            )
        }
        return path
    }

    /// A new X25519 identity (`AGE-SECRET-KEY-1…`) read from age-keygen's standard output, and its
    /// recipient. Nothing is written to a file.
    public func generateIdentity() async throws -> (identity: SecretBytes, recipient: String) {
        let result = try await Subprocess(
            executable: try program("age-keygen"),
            arguments: [],
            environment: environment
        )
        .run()
        guard result.succeeded else { throw Subprocess.failure("age-keygen", "it failed (exit \(result.status))") }
        let identity = Self.identityLine(in: result.stdout)
        guard let identity else { throw Subprocess.failure("age-keygen", "no identity in its output") }
        return (identity, try await recipient(of: identity))
    }

    /// The line that holds the secret key, without the comments age-keygen writes around it.
    static func identityLine(in bytes: [UInt8]) -> SecretBytes? {
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("AGE-SECRET-KEY-1".utf8)) {
            return SecretBytes(Array(line))
        }
        return nil
    }

    /// The recipient of a native identity (`age-keygen -y`, the identity on stdin).
    public func recipient(of identity: SecretBytes) async throws -> String {
        let result = try await Subprocess(
            executable: try program("age-keygen"),
            arguments: ["-y"],
            environment: environment
        )
        .run(input: identity)
        guard result.succeeded else {
            throw CredentialError(
                .notAMember,
                path: nil,
                "The age identity is not one age reads.",
                hint: "Give an identity as age-keygen writes it: a line that starts with AGE-SECRET-KEY-1."
            )
        }
        return result.output.trimmed
    }

    /// Encrypts `plaintext` to every recipient (binary age v1). Recipients are public and travel in argv.
    public func encrypt(_ plaintext: SecretBytes, to recipients: [String]) async throws -> [UInt8] {
        guard !recipients.isEmpty else {
            throw CredentialError(.teamError, path: nil, "The team has no members to encrypt to.", hint: nil)
        }
        let arguments = ["--encrypt"] + recipients.flatMap { ["--recipient", $0] }
        let result = try await Subprocess(
            executable: try program("age"),
            arguments: arguments,
            environment: environment
        )
        .run(input: plaintext)
        guard result.succeeded else { throw Subprocess.failure("age", "it could not encrypt (exit \(result.status))") }
        return result.stdout
    }

    /// What became of a decryption: the secret, or why there is none, in apnsctl's words (age's
    /// own message may quote the file it was given, so it is never shown, nor read).
    public enum Decryption {
        /// The secret.
        case decrypted(SecretBytes)
        /// The identity is not among the file's recipients.
        case notARecipient
        /// The identity itself is not one age reads.
        case badIdentity
        /// The file is not an age file, or was damaged.
        case damaged
    }

    /// Decrypts with `identity`, which age reads from an inherited pipe (`-i /dev/fd/3`). When
    /// age fails, why is decided from facts: the file's header, then the identity (checked with
    /// age-keygen, or read as an ssh-ed25519 key), then whether a stanza of the header may be
    /// the identity's. An X25519 stanza does not name its recipient: a well-formed file with
    /// X25519 stanzas that a valid native identity cannot open is taken as not encrypted to it.
    public func decrypt(_ ciphertext: [UInt8], identity: SecretBytes) async throws -> Decryption {
        let arguments = ["--decrypt", "--identity", "/dev/fd/\(Subprocess.secretDescriptor)"]
        let result = try await Subprocess(
            executable: try program("age"),
            arguments: arguments,
            environment: environment
        )
        .run(input: SecretBytes(ciphertext), secret: identity)
        if result.succeeded { return .decrypted(SecretBytes(result.stdout)) }
        guard let header = AgeHeader(ciphertext) else { return .damaged }
        guard let kind = try await identityKind(identity) else { return .badIdentity }
        if case .sshEd25519 = kind, header.mayBeFor(kind) { return .damaged }
        return .notARecipient
    }

    /// The kind of `identity`: an ssh-ed25519 private key apnsctl can read, or a native identity
    /// age-keygen gives a recipient for; nil when it is neither.
    func identityKind(_ identity: SecretBytes) async throws -> AgeIdentityKind? {
        if let key = SigningKey(openSSH: identity) { return .sshEd25519(tag: AgeIdentityKind.tag(of: key.publicKey)) }
        let result = try await Subprocess(
            executable: try program("age-keygen"),
            arguments: ["-y"],
            environment: environment
        )
        .run(input: identity)
        return result.succeeded && result.output.trimmed.hasPrefix("age1") ? .x25519 : nil
    }

    /// Checks that `recipient` is one age accepts (`age1…` or `ssh-ed25519 …`), by encrypting nothing to it.
    public func validate(recipient: String) async throws {
        // ssh-rsa, which age also takes, is not a team recipient (docs/team.md).
        let looksRight = TeamFile.isRecipient(recipient)
        let result =
            looksRight
            ? try await Subprocess(
                executable: try program("age"),
                arguments: ["--encrypt", "--recipient", recipient],
                environment: environment
            ).run(input: SecretBytes([])) : nil
        guard let result, result.succeeded else {
            throw CredentialError(
                .invalidArgument,
                path: nil,
                recipient.hasPrefix("ssh-rsa ")
                    ? "An ssh-rsa key is not taken as a team member's recipient: only age recipients and ssh-ed25519 keys are."
                    : "\"\(recipient)\" is not an age recipient.",
                hint:
                    "Give the recipient (age1…) that joining the team printed for the new member, or an ssh-ed25519 public key line."
            )
        }
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
