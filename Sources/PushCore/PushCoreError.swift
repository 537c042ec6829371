import Foundation

/// Every failure of the APNs vocabulary itself: a device token that is not one, a notification
/// APNs would refuse, a token key or identifier that cannot be used, a results file to resume
/// that does not belong to the run.
///
/// One struct with a code, as swift-certificates does: callers switch on ``code``; people read
/// ``message`` (what was wrong) and ``hint`` (what to do, in words: never a command-line flag,
/// which the command-line tool adds itself from the code). Neither contains key material.
///
/// Made by static factories, one per code (`PushCoreError.invalidDeviceToken(_:hint:)`…), which
/// record where the error was made (``file``, ``line``: in ``debugDescription`` only).
public struct PushCoreError: TypedCodeError, CustomStringConvertible, CustomDebugStringConvertible {
    /// What went wrong, one of a closed set (``Code``, in `PushCoreError+Code.swift`); a report
    /// gives it as ``reportedCode``.
    public let code: Code
    public let message: String
    public let hint: String?
    /// The source file that made the error (`#fileID`), for reports of bugs, not for people.
    public let file: String
    /// The line of ``file`` that made the error.
    public let line: UInt

    /// An error of any code. Prefer the factories (`PushCoreError.invalidTime(_:hint:)`…).
    package init(_ code: Code, _ message: String, hint: String? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.message = message
        self.hint = hint
        self.file = file
        self.line = line
    }

    /// The code as JSON reports give it.
    public var reportedCode: ErrorCode { code.errorCode }

    public var description: String { hint.map { "\(message) \($0)" } ?? message }

    /// `code: message hint (file:line)`, for logs and test failures.
    public var debugDescription: String { "\(code): \(description) (\(file):\(line))" }

    /// A time, Live Activity or channel ID that cannot be sent is what was asked, not a failure
    /// to check.
    public var failure: FailureKind {
        [.invalidTime, .invalidLiveActivity, .invalidChannel].contains(code) ? .invalidRequest : .couldNotCheck
    }
}

extension ErrorCode {
    /// A device token that is not hexadecimal, has an odd length or is too long.
    public static let invalidDeviceToken = ErrorCode("invalid_device_token")
    /// A notification APNs would refuse (payload too large or not JSON, collapse ID too long).
    public static let invalidNotification = ErrorCode("invalid_notification")
    /// A key ID that is not 10 upper-case letters and digits.
    public static let invalidKeyID = ErrorCode("invalid_key_id")
    /// A team ID that is not 10 upper-case letters and digits.
    public static let invalidTeamID = ErrorCode("invalid_team_id")
    /// A token key that cannot sign (not P-256, damaged).
    public static let invalidKey = ErrorCode("invalid_key")
    /// A results file whose run is not the one being resumed (another credential, topic,
    /// push type, payload or gateway).
    public static let runMismatch = ErrorCode("run_mismatch")
    /// A results file that was not written by a bulk run.
    public static let notAResultsFile = ErrorCode("not_a_results_file")
    /// A time (expiration, stale or dismissal date) that cannot be read or has passed.
    public static let invalidTime = ErrorCode("invalid_time")
    /// A Live Activity payload or its headers that break ActivityKit's rules.
    public static let invalidLiveActivity = ErrorCode("invalid_live_activity")
    /// A channel ID that is not base64, or a channel request APNs would refuse.
    public static let invalidChannel = ErrorCode("invalid_channel")
    /// Results or a journal that cannot be opened or written; a credential file or the store's
    /// files that cannot be written.
    public static let writeFailed = ErrorCode("write_failed")
}
