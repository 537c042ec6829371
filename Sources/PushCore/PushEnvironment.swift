/// An APNs environment.
public enum PushEnvironment: String, Codable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case sandbox
    case production

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs == .sandbox && rhs == .production }
    public var description: String { rawValue }
}

/// A set of environments: what a credential may serve (a universal certificate or an
/// unrestricted token key serves both; an environment-scoped key one).
public struct PushEnvironmentSet: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let sandbox = PushEnvironmentSet(rawValue: 1 << 0)
    public static let production = PushEnvironmentSet(rawValue: 1 << 1)
    public static let both: PushEnvironmentSet = [.sandbox, .production]

    public init(_ environment: PushEnvironment) {
        self = environment == .sandbox ? .sandbox : .production
    }

    public init(_ environments: some Sequence<PushEnvironment>) {
        self = []
        for environment in environments { insert(PushEnvironmentSet(environment)) }
    }

    public func contains(_ environment: PushEnvironment) -> Bool { contains(PushEnvironmentSet(environment)) }

    /// The members, sandbox first.
    public var environments: [PushEnvironment] { PushEnvironment.allCases.filter { contains($0) } }

    public var description: String {
        switch self {
        case .both: "sandbox and production"
        case []: "no environment"
        default: environments.map(\.rawValue).joined(separator: ", ")
        }
    }
}
