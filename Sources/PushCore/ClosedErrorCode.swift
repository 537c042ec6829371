/// A module's closed set of error codes (a private enum behind static constants), each one of
/// ``ErrorCode``'s, the string JSON reports give. What every such set offers beyond its own
/// constants comes from here, once.
public protocol ClosedErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// Every code of the set.
    static var all: [Self] { get }
    /// The code as JSON reports give it, one of ``ErrorCode``'s static members.
    var errorCode: ErrorCode { get }
}

extension ClosedErrorCode {
    /// The typed code a shared one names, or nil when this set does not have it: for an error
    /// rebuilt from another module's, which maps codes explicitly.
    public init?(reported errorCode: ErrorCode) {
        guard let code = Self.all.first(where: { $0.errorCode == errorCode }) else { return nil }
        self = code
    }

    /// The code as JSON gives it (`invalid_time`).
    public var name: String { errorCode.rawValue }
    public var description: String { errorCode.rawValue }
}
