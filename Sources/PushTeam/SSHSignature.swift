import Crypto
import Foundation
import PushStore

/// A member's signing key: Ed25519, in OpenSSH's formats, so that every signature apnsctl makes
/// is one `ssh-keygen -Y verify` checks, and the key kept in the Secret Service is one
/// `ssh-keygen -Y sign -f` uses (docs/team.md shows both).
public struct SigningKey: Sendable {
    let key: Curve25519.Signing.PrivateKey

    /// A new key, made in memory.
    public init() { key = Curve25519.Signing.PrivateKey() }

    init(key: Curve25519.Signing.PrivateKey) { self.key = key }

    public var publicKey: SigningPublicKey { SigningPublicKey(raw: [UInt8](key.publicKey.rawRepresentation)) }

    /// Signs `message` in the SSHSIG format (openssh's PROTOCOL.sshsig), armored as `ssh-keygen -Y sign` writes it.
    public func sign(_ message: [UInt8], namespace: String) throws -> String {
        let hash = [UInt8](SHA512.hash(data: message))
        let signed = SSHSignature.signedData(namespace: namespace, hash: hash)
        let signature = [UInt8](try key.signature(for: signed))
        var blob = SSHWire()
        blob.raw(Array("SSHSIG".utf8))
        blob.uint32(1)
        blob.string(publicKey.blob)
        blob.string(Array(namespace.utf8))
        blob.string([])
        blob.string(Array("sha512".utf8))
        var encodedSignature = SSHWire()
        encodedSignature.string(Array("ssh-ed25519".utf8))
        encodedSignature.string(signature)
        blob.string(encodedSignature.bytes)
        return SSHSignature.armor(blob.bytes)
    }

    /// The key as an unencrypted OpenSSH private key file (`-----BEGIN OPENSSH PRIVATE KEY-----`),
    /// the text kept in the Secret Service.
    public var openSSHPrivateKey: SecretBytes {
        let seed = [UInt8](key.rawRepresentation)
        let publicRaw = [UInt8](key.publicKey.rawRepresentation)
        var secret = SSHWire()
        let check = UInt32.random(in: 0...UInt32.max)
        secret.uint32(check)
        secret.uint32(check)
        secret.string(Array("ssh-ed25519".utf8))
        secret.string(publicRaw)
        secret.string(seed + publicRaw)
        secret.string(Array("apnsctl team signing key".utf8))
        var padding: UInt8 = 1
        while secret.bytes.count % 8 != 0 {
            secret.raw([padding])
            padding += 1
        }
        var file = SSHWire()
        file.raw(Array("openssh-key-v1".utf8) + [0])
        file.string(Array("none".utf8))
        file.string(Array("none".utf8))
        file.string([])
        file.uint32(1)
        file.string(publicKey.blob)
        file.string(secret.bytes)
        let body = Data(file.bytes).base64EncodedString().chunked(70).joined(separator: "\n")
        return SecretBytes("-----BEGIN OPENSSH PRIVATE KEY-----\n\(body)\n-----END OPENSSH PRIVATE KEY-----\n")
    }

    /// Reads an unencrypted OpenSSH Ed25519 private key file; nil when it is not one.
    public init?(openSSH text: SecretBytes) {
        let lines = String(decoding: text.bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
        guard lines.first?.trimmingCharacters(in: .whitespaces) == "-----BEGIN OPENSSH PRIVATE KEY-----",
            let end = lines.firstIndex(where: { $0.hasPrefix("-----END OPENSSH PRIVATE KEY-----") }),
            let data = Data(base64Encoded: lines[1..<end].joined())
        else { return nil }
        var reader = SSHReader([UInt8](data))
        guard reader.raw(15) == Array("openssh-key-v1".utf8) + [0],
            reader.string() == Array("none".utf8), reader.string() == Array("none".utf8), reader.string() == [],
            reader.uint32() == 1, reader.string() != nil, let secret = reader.string()
        else { return nil }
        var inner = SSHReader(secret)
        guard let first = inner.uint32(), first == inner.uint32(), inner.string() == Array("ssh-ed25519".utf8),
            inner.string() != nil, let pair = inner.string(), pair.count == 64,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: pair[0..<32])
        else { return nil }
        self.key = key
    }
}

/// A member's public signing key, as recorded in `team.json` and in an allowed-signers file.
public struct SigningPublicKey: Sendable, Hashable, Codable {
    /// The 32 bytes of the Ed25519 public key.
    public let raw: [UInt8]

    public init(raw: [UInt8]) { self.raw = raw }

    /// OpenSSH's wire form: `string "ssh-ed25519", string key`.
    public var blob: [UInt8] {
        var wire = SSHWire()
        wire.string(Array("ssh-ed25519".utf8))
        wire.string(raw)
        return wire.bytes
    }

    /// `ssh-ed25519 AAAA…`, the line an `.pub` file and an allowed-signers file hold.
    public var line: String { "ssh-ed25519 \(Data(blob).base64EncodedString())" }

    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    public var fingerprint: String {
        "SHA256:" + Data(SHA256.hash(data: blob)).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// Reads `ssh-ed25519 AAAA… [comment]` or the bare base64 blob; nil for anything else.
    public init?(line: String) {
        let words = line.split(whereSeparator: \.isWhitespace)
        let encoded: Substring
        if words.count >= 2, words[0] == "ssh-ed25519" {
            encoded = words[1]
        } else if words.count == 1 {
            encoded = words[0]
        } else {
            return nil
        }
        guard let data = Data(base64Encoded: String(encoded)) else { return nil }
        var reader = SSHReader([UInt8](data))
        guard reader.string() == Array("ssh-ed25519".utf8), let raw = reader.string(), raw.count == 32,
            reader.isAtEnd
        else { return nil }
        self.raw = raw
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let key = SigningPublicKey(line: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not an ssh-ed25519 public key")
            )
        }
        self = key
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(line)
    }

    /// Whether `armored` is this key's SSHSIG signature of `message` in `namespace`.
    public func verifies(_ armored: String, of message: [UInt8], namespace: String) -> Bool {
        guard let signature = SSHSignature(armored: armored), signature.publicKey == self,
            signature.namespace == namespace, let hash = signature.hash(message),
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        else { return false }
        let signed = SSHSignature.signedData(namespace: namespace, hash: hash, algorithm: signature.hashAlgorithm)
        return key.isValidSignature(signature.signature, for: signed)
    }
}

/// An SSHSIG signature read from its armor.
public struct SSHSignature: Sendable {
    public let publicKey: SigningPublicKey
    public let namespace: String
    let hashAlgorithm: String
    let signature: [UInt8]

    /// Reads `-----BEGIN SSH SIGNATURE-----`; nil for anything else (or a key type other than Ed25519).
    public init?(armored: String) {
        let lines = armored.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(of: "-----BEGIN SSH SIGNATURE-----"),
            let end = lines.firstIndex(of: "-----END SSH SIGNATURE-----"), begin < end,
            let data = Data(base64Encoded: lines[(begin + 1)..<end].joined())
        else { return nil }
        var reader = SSHReader([UInt8](data))
        guard reader.raw(6) == Array("SSHSIG".utf8), reader.uint32() == 1, let keyBlob = reader.string(),
            let namespace = reader.string(), reader.string() != nil, let algorithm = reader.string(),
            let signatureBlob = reader.string(), reader.isAtEnd
        else { return nil }
        var keyReader = SSHReader(keyBlob)
        var signatureReader = SSHReader(signatureBlob)
        guard keyReader.string() == Array("ssh-ed25519".utf8), let raw = keyReader.string(), raw.count == 32,
            signatureReader.string() == Array("ssh-ed25519".utf8), let signature = signatureReader.string(),
            signature.count == 64
        else { return nil }
        publicKey = SigningPublicKey(raw: raw)
        self.namespace = String(decoding: namespace, as: UTF8.self)
        hashAlgorithm = String(decoding: algorithm, as: UTF8.self)
        self.signature = signature
    }

    func hash(_ message: [UInt8]) -> [UInt8]? {
        switch hashAlgorithm {
        case "sha512": return [UInt8](SHA512.hash(data: message))
        case "sha256": return [UInt8](SHA256.hash(data: message))
        default: return nil
        }
    }

    static func signedData(namespace: String, hash: [UInt8], algorithm: String = "sha512") -> [UInt8] {
        var wire = SSHWire()
        wire.raw(Array("SSHSIG".utf8))
        wire.string(Array(namespace.utf8))
        wire.string([])
        wire.string(Array(algorithm.utf8))
        wire.string(hash)
        return wire.bytes
    }

    static func armor(_ blob: [UInt8]) -> String {
        let body = Data(blob).base64EncodedString().chunked(70).joined(separator: "\n")
        return "-----BEGIN SSH SIGNATURE-----\n\(body)\n-----END SSH SIGNATURE-----\n"
    }
}

/// SSH's wire encoding: big-endian lengths before byte strings.
struct SSHWire {
    var bytes: [UInt8] = []

    mutating func raw(_ value: [UInt8]) { bytes += value }

    mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
    }

    mutating func string(_ value: [UInt8]) {
        uint32(UInt32(value.count))
        bytes += value
    }
}

struct SSHReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func raw(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func uint32() -> UInt32? {
        guard let four = raw(4) else { return nil }
        return four.reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func string() -> [UInt8]? {
        guard let length = uint32(), length <= 1 << 20 else { return nil }
        return raw(Int(length))
    }
}

extension String {
    func chunked(_ size: Int) -> [String] {
        var chunks: [String] = []
        var current = startIndex
        while current < endIndex {
            let next = index(current, offsetBy: size, limitedBy: endIndex) ?? endIndex
            chunks.append(String(self[current..<next]))
            current = next
        }
        return chunks
    }
}
