import Foundation

/// Every failure of the APNs vocabulary itself: a device token that is not one, a notification
/// APNs would refuse, a token key or identifier that cannot be used, a results file to resume
/// that does not belong to the run.
///
/// One struct with a code, as swift-certificates does: callers switch on ``code``; people read
/// ``message`` (what was wrong) and ``hint`` (what to do, in words: never a command-line flag,
/// which the command-line tool adds itself from the code). Neither contains key material.
///
/// Made where it happens, in that place's words, by the initializer with the code
/// (`PushCoreError(.invalidDeviceToken, message, hint:)`), which records where the error was made
/// (``file``, ``line``: in ``debugDescription`` only).
public struct PushCoreError: ReportableError, CustomStringConvertible, CustomDebugStringConvertible {
    /// A module's codes are ``ErrorCode``s: one string each, the one JSON gives.
    public typealias Code = ErrorCode

    /// What went wrong, as JSON reports give it (each code declared once, in
    /// `PushCoreError+Codes.swift`).
    public let code: Code
    public let message: String
    public let hint: String?
    /// The source file that made the error (`#fileID`), for reports of bugs, not for people.
    public let file: String
    /// The line of ``file`` that made the error.
    public let line: UInt

    /// An error of the code, in the words of the call site.
    package init(_ code: Code, _ message: String, hint: String? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.hint = hint
        self.file = file
        self.line = line
    }

    public var description: String { hint.map { "\(message) \($0)" } ?? message }

    /// `code: message hint (file:line)`, for logs and test failures.
    public var debugDescription: String { "\(code): \(description) (\(file):\(line))" }
}
