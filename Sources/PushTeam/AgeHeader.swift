import Crypto
import Foundation
import PushCore

/// The facts an age file's header gives (age-encryption.org/v1): whether it is one, and the
/// stanzas its file key is wrapped in. Why a decryption failed is decided from these and from the
/// identity, never from age's words.
struct AgeHeader: Equatable {
    /// The first line of each stanza, without `-> ` (`X25519 …`, `ssh-ed25519 TAG …`).
    var stanzas: [[Substring]]

    /// The header of `file`, or nil when it does not start as a binary age v1 file (a version
    /// line, at least one stanza, then the `---` line of its MAC).
    init?(_ file: [UInt8]) {
        let versionLine = Array("age-encryption.org/v1\n".utf8)
        guard file.starts(with: versionLine) else { return nil }
        // A header is small; a file whose MAC line is not within the first 64 KiB is not one.
        let text = String(decoding: file.dropFirst(versionLine.count).prefix(64 * 1024), as: UTF8.self)
        var stanzas: [[Substring]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("--- ") {
                guard !stanzas.isEmpty else { return nil }
                self.stanzas = stanzas
                return
            }
            if line.hasPrefix("-> ") {
                let words = line.dropFirst(3).split(separator: " ")
                guard !words.isEmpty else { return nil }
                stanzas.append(words)
            } else if stanzas.isEmpty {
                return nil
            }
        }
        return nil
    }

    /// Whether a stanza is one `identity` may unwrap: an X25519 stanza does not name its
    /// recipient, so any one may be the identity's; an ssh-ed25519 stanza names its key by a tag.
    func mayBeFor(_ identity: AgeIdentityKind) -> Bool {
        switch identity {
        case .x25519:
            return stanzas.contains { $0.first == "X25519" }
        case .sshEd25519(let tag):
            return stanzas.contains { $0.first == "ssh-ed25519" && $0.count > 1 && $0[1] == tag }
        }
    }
}

/// What kind of age identity a member's identity is, as far as a header can tell.
enum AgeIdentityKind: Equatable {
    /// A native identity (`AGE-SECRET-KEY-1…`).
    case x25519
    /// An ssh-ed25519 private key, by the tag its stanzas carry: the first four bytes of the
    /// SHA-256 of its public key's SSH encoding, in base64 without padding.
    case sshEd25519(tag: Substring)

    /// The tag of an ssh-ed25519 public key, as age writes it into a stanza.
    static func tag(of key: SigningPublicKey) -> Substring {
        let digest = Array(SHA256.hash(data: key.blob).prefix(4))
        return Substring(Data(digest).base64EncodedString().replacingOccurrences(of: "=", with: ""))
    }
}
