extension PushCoreError {
    /// What went wrong, one of a closed set (a private enum behind static constants, as
    /// swift-certificates names its codes): compare with the constants (`error.code == .invalidTime`)
    /// or switch on them; a new code is a new constant, never a new case that breaks a switch.
    /// Each is one of ``ErrorCode``'s, the string JSON reports give (``errorCode``).
    public struct Code: ClosedErrorCode {
        private enum Backing: Hashable, Sendable, CaseIterable {
            case invalidDeviceToken, invalidNotification, invalidTime, invalidLiveActivity, invalidChannel
            case invalidKeyID, invalidTeamID, invalidKey, writeFailed
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// `invalid_device_token` (``ErrorCode/invalidDeviceToken``).
        public static let invalidDeviceToken = Code(.invalidDeviceToken)
        /// `invalid_notification` (``ErrorCode/invalidNotification``).
        public static let invalidNotification = Code(.invalidNotification)
        /// `invalid_time` (``ErrorCode/invalidTime``).
        public static let invalidTime = Code(.invalidTime)
        /// `invalid_live_activity` (``ErrorCode/invalidLiveActivity``).
        public static let invalidLiveActivity = Code(.invalidLiveActivity)
        /// `invalid_channel` (``ErrorCode/invalidChannel``).
        public static let invalidChannel = Code(.invalidChannel)
        /// `invalid_key_id` (``ErrorCode/invalidKeyID``).
        public static let invalidKeyID = Code(.invalidKeyID)
        /// `invalid_team_id` (``ErrorCode/invalidTeamID``).
        public static let invalidTeamID = Code(.invalidTeamID)
        /// `invalid_key` (``ErrorCode/invalidKey``).
        public static let invalidKey = Code(.invalidKey)
        /// `write_failed` (``ErrorCode/writeFailed``).
        public static let writeFailed = Code(.writeFailed)

        /// Every code of this error.
        public static var all: [Code] { Backing.allCases.map(Code.init) }

        /// The code as JSON reports give it, one of ``ErrorCode``'s static members.
        public var errorCode: ErrorCode {
            switch backing {
            case .invalidDeviceToken: return .invalidDeviceToken
            case .invalidNotification: return .invalidNotification
            case .invalidTime: return .invalidTime
            case .invalidLiveActivity: return .invalidLiveActivity
            case .invalidChannel: return .invalidChannel
            case .invalidKeyID: return .invalidKeyID
            case .invalidTeamID: return .invalidTeamID
            case .invalidKey: return .invalidKey
            case .writeFailed: return .writeFailed
            }
        }

    }
}
