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
/// Made where it happens, in that place's words, by the initializer with the code
/// (`CredentialError(.wrongPassword, path:, message, hint:)`); a code whose wording or kind is always the same has its factory
/// (`CredentialError.aliasNotFound(_:_:hint:remedy:)`). Both record where the error was made (``file``, ``line``: in
/// ``debugDescription`` only, never in a message, a report or equality).
public struct CredentialError: ReportableError, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, as JSON reports give it. Each code is declared once, as a static member
    /// of ``ErrorCode``: the formats' in this module, the
    /// store's in PushStore, the team store's in PushTeam.
    public let code: Code
    /// The file the error is about, when there is one.
    public let path: String?
    /// What was wrong, as one sentence without the path.
    public let message: String
    /// What to do about it.
    public private(set) var hint: String?
    /// The stored credential the error is about, when there is one (so that a front end can
    /// name it in its own advice).
    public let alias: String?
    /// What to do about it, as a value a front end renders (see ``Remedy``).
    public let remedy: Remedy?
    /// The source file that made the error (`#fileID`), for reports of bugs, not for people.
    public let file: String
    /// The line of ``file`` that made the error.
    public let line: UInt

    /// An error of the code, in the words of the call site. A code with a factory (a refusal, a
    /// fixed wording) is made by that factory.
    package init(
        _ code: Code,
        path: String? = nil,
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

    /// A module's codes are PushCore's ``ErrorCode``s: one string each, the one JSON gives.
    public typealias Code = ErrorCode

    /// The file when there is one, else the stored credential.
    public var subject: ErrorSubject? { path.map(ErrorSubject.file) ?? alias.map(ErrorSubject.credential) }

    /// The same error with another hint.
    public func withHint(_ hint: String?) -> CredentialError {
        var changed = self
        changed.hint = hint
        return changed
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
