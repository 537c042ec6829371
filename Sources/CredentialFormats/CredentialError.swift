import Foundation
import PushCore

/// Every failure to read, decode or use a credential.
///
/// One struct with a code, in the style of swift-certificates and swift-nio: callers switch on
/// ``code``; people read ``message`` (what was wrong) and ``hint`` (what to do about it).
/// Neither ever contains a password or key material. Hints say what to do in words and never
/// name a command-line option: a front end that has options maps ``code`` (and ``alias``) to
/// its own wording.
///
/// Made by static factories, one per code (`CredentialError.fileNotFound(path:)`,
/// `.wrongPassword(path:_:hint:)`, `.aliasNotFound(_:_:hint:remedy:)`), which record where in the
/// source the error was made: ``file`` and ``line``, shown by ``debugDescription`` and never in a
/// message, a report or equality.
public struct CredentialError: TypedCodeError, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, one of a closed set (``Code``, in `CredentialError+Code.swift`); a
    /// report gives it as ``reportedCode``.
    public let code: Code
    /// The file the error is about, when there is one.
    public let path: String?
    /// What was wrong, as one sentence without the path.
    public let message: String
    /// What to do about it.
    public let hint: String?
    /// The stored credential the error is about, when there is one (so that a front end can
    /// name it in its own advice).
    public let alias: String?
    /// What to do about it, as a value a front end renders (see ``Remedy``).
    public let remedy: Remedy?
    /// The source file that made the error (`#fileID`), for reports of bugs, not for people.
    public let file: String
    /// The line of ``file`` that made the error.
    public let line: UInt

    /// An error of any code. Prefer the factories (`CredentialError.corrupt(path:_:hint:)`…):
    /// they name the code once and are where each code's wording lives.
    package init(
        _ code: Code,
        path: String?,
        _ message: String,
        hint: String? = nil,
        alias: String? = nil,
        remedy: Remedy? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.path = path
        self.message = message
        self.hint = hint
        self.alias = alias
        self.remedy = remedy
        self.file = file
        self.line = line
    }

    /// A refusal of a request that is valid but would lose or weaken something (a rotation that
    /// serves less, a certificate that is already stored, a taken alias, a file that exists, a
    /// member list that is not trusted) is a problem found: the request was checked and nothing
    /// changed. Everything else is a check that could not be made.
    public var failure: FailureKind { Self.refusals.contains(code) ? .problem : .couldNotCheck }

    /// The codes of refusals; see ``failure``.
    public static let refusals: Set<Code> = [
        .alreadyImported, .aliasTaken, .sameAppStored, .expiresSooner, .narrowerCoverage, .outsideValidity,
        .notAPushCertificate, .fileExists, .teamConflict, .historyRewritten, .untrustedMembers,
    ]

    /// The code as JSON reports give it.
    public var reportedCode: ErrorCode { code.errorCode }

    /// The file when there is one, else the stored credential.
    public var subject: ErrorSubject? { path.map(ErrorSubject.file) ?? alias.map(ErrorSubject.credential) }

    /// The same error with another hint.
    public func withHint(_ hint: String?) -> CredentialError {
        CredentialError(code, path: path, message, hint: hint, alias: alias, remedy: remedy, file: file, line: line)
    }

    public var description: String {
        var text = path.map { "\($0): \(message)" } ?? message
        if let hint { text += "\n  hint: \(hint)" }
        return text
    }

    /// `code: statement [subject] (file:line)`, for logs and test failures.
    public var debugDescription: String {
        var text = "\(code): \(statement)"
        if let alias { text += " [\(alias)]" }
        if let hint { text += " hint: \(hint)" }
        return text + " (\(file):\(line))"
    }
}

extension ErrorCode {
    public static let fileNotFound = ErrorCode("file_not_found")
    public static let isDirectory = ErrorCode("is_directory")
    public static let unreadable = ErrorCode("unreadable")
    public static let emptyFile = ErrorCode("empty_file")
    /// A PKCS#12 bundle or encrypted key whose iteration counts are far beyond any export's.
    public static let excessiveWork = ErrorCode("excessive_iterations")
    /// A file larger than anything of its kind, refused at its kind's limit.
    public static let fileTooLarge = ErrorCode("file_too_large")
    /// ``fileTooLarge`` by the name credential files gave it.
    public static var tooLarge: ErrorCode { .fileTooLarge }
    public static let notACertificate = ErrorCode("not_a_certificate")
    public static let corrupt = ErrorCode("corrupt")
    public static let truncated = ErrorCode("truncated")
    public static let noCertificate = ErrorCode("no_certificate")
    public static let passwordRequired = ErrorCode("password_required")
    public static let wrongPassword = ErrorCode("wrong_password")
    public static let unknownEncryption = ErrorCode("unknown_encryption")
    public static let legacyProviderUnavailable = ErrorCode("legacy_provider_unavailable")
    public static let noPrivateKey = ErrorCode("no_private_key")
    public static let keyMismatch = ErrorCode("key_mismatch")
    public static let unsupportedKey = ErrorCode("unsupported_key")
    public static let invalidArgument = ErrorCode("invalid_argument")
    public static let secretStoreUnavailable = ErrorCode("secret_store_unavailable")
    public static let secretStoreLocked = ErrorCode("secret_store_locked")
    public static let secretNotFound = ErrorCode("secret_not_found")
    public static let storeError = ErrorCode("store_error")
    public static let aliasNotFound = ErrorCode("alias_not_found")
    public static let alreadyImported = ErrorCode("already_imported")
    public static let aliasTaken = ErrorCode("alias_taken")
    /// A token key (.p8) was given without the team ID every JWT must name.
    public static let teamIDRequired = ErrorCode("team_id_required")
    /// A token key's ID cannot be read from its file name and was not given.
    public static let keyIDRequired = ErrorCode("key_id_required")
    /// An alias that cannot be a file name in the store.
    public static let invalidAlias = ErrorCode("invalid_alias")
    /// The store's folder holds something other than a store.
    public static let notAStore = ErrorCode("not_a_store")
    /// The store's credentials folder holds files but its index is missing.
    public static let indexMissing = ErrorCode("index_missing")
    /// The store's index cannot be read or decoded.
    public static let indexUnreadable = ErrorCode("index_unreadable")
    /// An index entry names a file outside the store's credentials folder.
    public static let entryOutsideStore = ErrorCode("entry_outside_store")
    /// A file that would be written exists already.
    public static let fileExists = ErrorCode("file_exists")
    /// A rotation would put a certificate that expires sooner in place of the one it replaces.
    public static let expiresSooner = ErrorCode("expires_sooner")
    /// A rotation would put a certificate in place of one that serves an environment or topic
    /// the new one does not.
    public static let narrowerCoverage = ErrorCode("narrower_coverage")
    /// A certificate that is expired or not yet valid, which APNs would refuse.
    public static let outsideValidity = ErrorCode("outside_validity")
    /// A change that only a token key's metadata can take was asked of a certificate.
    public static let notATokenKey = ErrorCode("not_a_token_key")
    /// A certificate without its key, and no pending request in the store holds that key.
    public static let noMatchingRequest = ErrorCode("no_matching_request")
    /// A certificate for the same topics and environments as a stored one, imported without
    /// saying it replaces that one.
    public static let sameAppStored = ErrorCode("same_app_stored")
    /// A certificate with neither Apple's push extensions nor a push topic.
    public static let notAPushCertificate = ErrorCode("not_a_push_certificate")
    /// A credential cannot be written in the format asked for (a token key as PKCS#12).
    public static let notExportable = ErrorCode("not_exportable")

    // The team store (a store shared through git, its secrets encrypted with age).
    /// A decrypted secret does not match the certificate or key fingerprint the index names.
    public static let tampered = ErrorCode("tampered")
    /// git or age failed, or the team repository is not in the shape apnsctl made.
    public static let teamError = ErrorCode("team_error")
    /// This member's identity is not (yet) a recipient of the team's secrets, or there is none.
    public static let notAMember = ErrorCode("not_a_member")
    /// The same alias was changed on both sides of a sync.
    public static let teamConflict = ErrorCode("team_conflict")
    /// The member list the repository holds is not signed by a trusted member: nothing is
    /// encrypted to it (docs/team.md, "Signed membership").
    public static let untrustedMembers = ErrorCode("untrusted_members")
    /// The remote's branch no longer holds the commit this clone last synced.
    public static let historyRewritten = ErrorCode("history_rewritten")
    /// A membership change needs this member's signing key, and none is available here.
    public static let noSigningKey = ErrorCode("no_signing_key")
    /// A file of the store is a link or a special file, not a regular file inside the store.
    public static let notARegularFile = ErrorCode("not_a_regular_file")
    /// The store folder is a git clone with nothing checked out (a team store cloned from a
    /// remote whose HEAD names a branch it does not have).
    public static let notCheckedOut = ErrorCode("not_checked_out")
    /// The store's folder is owned by someone else, or others may write to it.
    public static let unsafeStoreFolder = ErrorCode("unsafe_store_folder")
}
