/// An APNs environment.
public enum PushEnvironment: String, Codable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case sandbox
    case production

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs == .sandbox && rhs == .production }
    public var description: String { rawValue }
}
