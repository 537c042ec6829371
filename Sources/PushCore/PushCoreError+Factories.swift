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
