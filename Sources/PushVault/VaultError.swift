import Foundation
import PushCore

/// The one error of the Vault client, in Vault's terms: which server, which path, which
/// capability a policy must grant.
///
/// Built as swift-certificates builds its errors: a struct over a set of codes only this module
/// makes (each one `static let` with the string reports give), made by static factories that
/// capture the source location, and keeping the ``subject`` it is about.
///
/// No error holds a token: neither the Vault token nor a provider token (a JWT) is ever put into
/// a message, a hint or a subject, and text that Vault sends back is scrubbed of the token
/// before it is kept.
public struct VaultError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A kind of failure: compare with the static constants (`error.code == .sealed`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as a report gives it (`vault_sealed`).
        public let name: String
        fileprivate init(_ name: String) { self.name = name }

        /// The same as ``name``.
        public var description: String { name }

        /// The server could not be reached, or did not answer in time.
        public static let unreachable = Code("vault_unreachable")
        /// The server is sealed: it answers, but can read and sign nothing until it is unsealed.
        public static let sealed = Code("vault_sealed")
        /// The token's policies do not grant the capability on the path.
        public static let permissionDenied = Code("vault_permission_denied")
        /// No token was given, in any of the places Vault's clients look.
        public static let tokenMissing = Code("vault_token_missing")
        /// The token is not valid: expired, revoked or mistyped.
        public static let tokenInvalid = Code("vault_token_invalid")
        /// AppRole login was refused (a wrong or used-up role ID or secret ID).
        public static let loginFailed = Code("vault_login_failed")
        /// The mount is a KV secrets engine of version 1, which has no versions and no
        /// check-and-set.
        public static let kvVersion1 = Code("vault_kv_version_1")
        /// No Transit secrets engine is mounted at the path.
        public static let transitNotMounted = Code("vault_transit_not_mounted")
        /// A check-and-set write lost: another writer changed the entry after it was read.
        public static let casMismatch = Code("vault_cas_mismatch")
        /// Nothing is stored at the path (or its latest version was deleted).
        public static let notFound = Code("vault_not_found")
        /// Vault refused the request for a reason of its own (said in the message).
        public static let rejected = Code("vault_rejected")
        /// The answer was not what Vault sends (not JSON, a field missing, too large).
        public static let badResponse = Code("vault_bad_response")
        /// The address, CA file, namespace or login settings cannot be used.
        public static let invalidConfiguration = Code("vault_invalid_configuration")
    }

    /// What an error is about: the server, and when there is one the path and the capability
    /// (`read`, `create`, `update`, `delete`, `list`) a policy must grant on it.
    public struct Subject: Hashable, Sendable, CustomStringConvertible {
        /// The server's address (`https://vault.example.com:8200`).
        public var address: String
        /// The API path below `/v1/`, without a query (`secret/data/apnsctl/prod`).
        public var path: String?
        /// The policy capability the request needed.
        public var capability: String?

        /// A subject: the server, and the path and capability when there are.
        public init(address: String, path: String? = nil, capability: String? = nil) {
            self.address = address
            self.path = path
            self.capability = capability
        }

        /// `ADDRESS/v1/PATH (CAPABILITY)`.
        public var description: String {
            var text = address
            if let path { text += "/v1/\(path)" }
            if let capability { text += " (\(capability))" }
            return text
        }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, as one sentence.
    public let message: String
    /// What to do about it, when there is something to say.
    public let hint: String?
    /// The server, path and capability the error is about.
    public let subject: Subject
    /// Where in this library the error was made (for reports of bugs, not for people).
    public let location: String

    init(
        _ code: Code,
        _ message: String,
        hint: String?,
        subject: Subject,
        file: String,
        line: UInt
    ) {
        self.code = code
        self.message = message
        self.hint = hint
        self.subject = subject
        self.location = "\(file):\(line)"
    }

    /// `code: message [subject] hint`, for logs and test failures.
    public var description: String {
        var text = "\(code): \(message) [\(subject)]"
        if let hint { text += " \(hint)" }
        return text
    }

    /// Two errors are equal when their code and subject are: the wording may change.
    public static func == (lhs: VaultError, rhs: VaultError) -> Bool {
        lhs.code == rhs.code && lhs.subject == rhs.subject
    }

    /// Hashes what equality compares: the code and the subject.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(subject)
    }

    /// The error as apnsctl's JSON reports give one (`error.code` is the code's ``Code/name``).
    public var reported: ReportedError { ReportedError(code: code.name, message: message, hint: hint) }
}
