import Foundation
import PushCore

/// Every failure to set up or run the local gateway, or to mint a test identity.
///
/// One struct with a code, like the other modules' errors: callers switch on ``code``; people
/// read ``message`` and ``hint`` (in words: the command line adds its own options from the code).
///
/// Made where it happens, in that place's words, by the initializer with the code
/// (`LocalGatewayError(.invalidRegistry, path:, message, hint:)`), which records where the error
/// was made (``file``, ``line``: in ``debugDescription`` only).
public struct LocalGatewayError: ReportableError, CustomStringConvertible, CustomDebugStringConvertible {
    /// A module's codes are ``ErrorCode``s: one string each, the one JSON gives.
    public typealias Code = ErrorCode

    /// What went wrong, as JSON reports give it (each code declared once, as an ``ErrorCode``).
    public let code: Code
    /// The file (or files) the error is about.
    public let path: String?
    public let message: String
    public let hint: String?
    /// The source file that made the error (`#fileID`), for reports of bugs, not for people.
    public let file: String
    /// The line of ``file`` that made the error.
    public let line: UInt

    /// An error of the code, in the words of the call site.
    package init(
        _ code: Code,
        path: String? = nil,
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.path = path
        self.message = message
        self.hint = hint
        self.file = file
        self.line = line
    }

    /// `code: description (file:line)`, for logs and test failures.
    public var debugDescription: String { "\(code): \(description) (\(file):\(line))" }

    public var description: String { (path.map { "\($0): " } ?? "") + message + (hint.map { " \($0)" } ?? "") }

    public var subject: ErrorSubject? { path.map(ErrorSubject.file) }
}
