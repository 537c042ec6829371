import Crypto
import Foundation
import PushCore

/// What a ``SharedProviderToken`` remembers between calls: the public key that verifies shared
/// tokens, the tokens APNs refused, the entry versions already warned about, the token this
/// process sends with (the last one it verified, wrote or signed for itself), and whether its
/// policies refused it a write of the entry.
final class SharedTokenMemory: @unchecked Sendable {
    private let lock = NSLock()
    private var publicKey: P256.Signing.PublicKey?
    private var rejected: Set<String> = []
    private var warned: Set<Int> = []
    private var held: IssuedProviderToken?
    private var writeRefused = false

    var knownPublicKey: P256.Signing.PublicKey? {
        get { lock.withLock { publicKey } }
        set { lock.withLock { publicKey = newValue } }
    }

    /// APNs refused `jwt`: never sent again, and no longer held.
    func reject(_ jwt: String) {
        let digest = Self.digest(jwt)
        lock.withLock {
            rejected.insert(digest)
            if held.map({ Self.digest($0.jwt) }) == digest { held = nil }
        }
    }

    func isRejected(_ jwt: String) -> Bool {
        let digest = Self.digest(jwt)
        return lock.withLock { rejected.contains(digest) }
    }

    /// True the first time an entry version is warned about.
    func firstWarning(for version: Int) -> Bool { lock.withLock { warned.insert(version).inserted } }

    /// The process now sends with `token`.
    func hold(_ token: IssuedProviderToken) { lock.withLock { held = token } }

    /// The token the process sends with, fresh or not (nil once APNs refused it).
    var heldToken: IssuedProviderToken? { lock.withLock { held } }

    /// The process's policies do not let it write the entry: it stops trying to put its token
    /// back there (it still tries once a refresh age, when it needs a new token).
    var mayNotWrite: Bool {
        get { lock.withLock { writeRefused } }
        set { lock.withLock { writeRefused = newValue } }
    }

    private static func digest(_ jwt: String) -> String { HexText.of(SHA256.hash(data: Data(jwt.utf8))) }
}
