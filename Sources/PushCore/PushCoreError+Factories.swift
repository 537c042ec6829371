/// The codes this file's factories make, each declared once with the string JSON reports give.
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

/// The factories of the APNs vocabulary's codes: one per code, each taking the message the call
/// site words and recording where the error was made (`#fileID`, `#line`).
extension PushCoreError {
    // MARK: Requests

    /// ``ErrorCode/invalidDeviceToken`` (`invalid_device_token`), in the words of the call site.
    public static func invalidDeviceToken(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidDeviceToken, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidNotification`` (`invalid_notification`), in the words of the call site.
    public static func invalidNotification(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidNotification, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidTime`` (`invalid_time`), in the words of the call site.
    public static func invalidTime(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidTime, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidLiveActivity`` (`invalid_live_activity`), in the words of the call site.
    public static func invalidLiveActivity(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidLiveActivity, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidChannel`` (`invalid_channel`), in the words of the call site.
    public static func invalidChannel(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidChannel, message, hint: hint, file: file, line: line)
    }

    // MARK: Keys and files

    /// ``ErrorCode/invalidKeyID`` (`invalid_key_id`), in the words of the call site.
    public static func invalidKeyID(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidKeyID, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidTeamID`` (`invalid_team_id`), in the words of the call site.
    public static func invalidTeamID(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidTeamID, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/invalidKey`` (`invalid_key`), in the words of the call site.
    public static func invalidKey(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.invalidKey, message, hint: hint, file: file, line: line)
    }

    /// ``ErrorCode/writeFailed`` (`write_failed`), in the words of the call site.
    public static func writeFailed(
        _ message: String,
        hint: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) -> PushCoreError {
        Self(.writeFailed, message, hint: hint, file: file, line: line)
    }
}
