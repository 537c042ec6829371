import PushCore

extension LocalGatewayError {
    /// What went wrong, one of a closed set (a private enum behind static constants, as
    /// swift-certificates names its codes): compare with the constants (`error.code == .cannotListen`)
    /// or switch on them; a new code is a new constant, never a new case that breaks a switch.
    /// Each is one of ``ErrorCode``'s, the string JSON reports give (``errorCode``).
    public struct Code: ClosedErrorCode {
        private enum Backing: Hashable, Sendable, CaseIterable {
            case invalidRegistry, invalidIdentity, invalidClientCA, logNotWritable, cannotListen, invalidCA
            case invalidMintRequest, invalidTokenKey
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// `invalid_registry` (``ErrorCode/invalidRegistry``).
        public static let invalidRegistry = Code(.invalidRegistry)
        /// `invalid_identity` (``ErrorCode/invalidIdentity``).
        public static let invalidIdentity = Code(.invalidIdentity)
        /// `invalid_client_ca` (``ErrorCode/invalidClientCA``).
        public static let invalidClientCA = Code(.invalidClientCA)
        /// `log_not_writable` (``ErrorCode/logNotWritable``).
        public static let logNotWritable = Code(.logNotWritable)
        /// `cannot_listen` (``ErrorCode/cannotListen``).
        public static let cannotListen = Code(.cannotListen)
        /// `invalid_ca` (``ErrorCode/invalidCA``).
        public static let invalidCA = Code(.invalidCA)
        /// `invalid_mint_request` (``ErrorCode/invalidMintRequest``).
        public static let invalidMintRequest = Code(.invalidMintRequest)
        /// `invalid_token_key` (``ErrorCode/invalidTokenKey``).
        public static let invalidTokenKey = Code(.invalidTokenKey)

        /// Every code of this error.
        public static var all: [Code] { Backing.allCases.map(Code.init) }

        /// The code as JSON reports give it, one of ``ErrorCode``'s static members.
        public var errorCode: ErrorCode {
            switch backing {
            case .invalidRegistry: return .invalidRegistry
            case .invalidIdentity: return .invalidIdentity
            case .invalidClientCA: return .invalidClientCA
            case .logNotWritable: return .logNotWritable
            case .cannotListen: return .cannotListen
            case .invalidCA: return .invalidCA
            case .invalidMintRequest: return .invalidMintRequest
            case .invalidTokenKey: return .invalidTokenKey
            }
        }

    }
}
