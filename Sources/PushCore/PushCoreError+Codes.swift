/// The APNs vocabulary's codes, each declared once with the string JSON reports give. Each is
/// made where it happens, in that place's words: `PushCoreError(.invalidTime, message, hint:)`.
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
    public static let invalidTime = ErrorCode("invalid_time", failure: .invalidRequest)
    /// A Live Activity payload or its headers that break ActivityKit's rules.
    public static let invalidLiveActivity = ErrorCode("invalid_live_activity", failure: .invalidRequest)
    /// A channel ID that is not base64, or a channel request APNs would refuse.
    public static let invalidChannel = ErrorCode("invalid_channel", failure: .invalidRequest)
    /// Results or a journal that cannot be opened or written; a credential file or the store's
    /// files that cannot be written.
    public static let writeFailed = ErrorCode("write_failed")
}
