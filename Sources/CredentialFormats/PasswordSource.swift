import Foundation

/// Why a password is being asked for, so a prompt can say which file it is for.
public struct PasswordRequest: Sendable {
    public let path: String
    /// "PKCS#12 bundle", "encrypted private key"...
    public let what: String
    /// True when an earlier answer was wrong (only interactive sources get a second chance).
    public let isRetry: Bool

    public init(path: String, what: String, isRetry: Bool = false) {
        self.path = path
        self.what = what
        self.isRetry = isRetry
    }
}

/// Supplies a password when (and only when) a file needs one.
public struct PasswordSource: Sendable {
    /// Interactive sources (a prompt on a terminal) are asked again after a wrong answer.
    public var isInteractive: Bool
    /// The password this source gives whatever is asked, when it is known up front (``fixed(_:)``):
    /// a bundle can then be tried with it first.
    public private(set) var known: SecretBytes?
    private let provide: @Sendable (PasswordRequest) throws -> SecretBytes?

    public init(isInteractive: Bool = false, _ provide: @escaping @Sendable (PasswordRequest) throws -> SecretBytes?) {
        self.isInteractive = isInteractive
        self.provide = provide
    }

    /// Returns nil when the source has no password to give.
    public func callAsFunction(_ request: PasswordRequest) throws -> SecretBytes? { try provide(request) }

    /// A source that never has a password: files that need one fail with `passwordRequired`.
    public static let none = PasswordSource { _ in nil }
    /// Always gives `secret`.
    public static func fixed(_ secret: SecretBytes) -> PasswordSource {
        var source = PasswordSource { _ in secret }
        source.known = secret
        return source
    }
}
