import Crypto
import Foundation

/// Which part of a run's tokens a results file holds: shard `k` of `n`, as the run header
/// records it (`"shard":{"k":K,"n":N}`). A results file without it holds a whole run.
public struct RunShard: Codable, Hashable, Sendable, CustomStringConvertible {
    public var k: Int
    public var n: Int

    public init(k: Int, n: Int) {
        self.k = k
        self.n = n
    }

    /// `K/N`, as `send --shard` takes it.
    public var description: String { "\(k)/\(n)" }
}

extension RunShard {
    /// The index variables batch systems set on each worker of an array, in the order
    /// `--shard auto/N` reads them: Kubernetes Indexed Jobs, AWS Batch array jobs, Slurm job
    /// arrays. Each counts from 0, as shard numbers do.
    public static let indexVariables = ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX", "SLURM_ARRAY_TASK_ID"]

    /// The shard (0 ..< `n`) a device token falls in: the first 8 bytes of the SHA-256 of the
    /// token's lower-case hex, read big-endian, modulo `n`. It depends on the token alone, so
    /// the same token lands in the same shard whatever the order of the file or the machine.
    public static func index(ofToken token: String, among n: Int) -> Int {
        index(of: Array(token.lowercased().utf8), among: n)
    }

    static func index(of bytes: [UInt8], among n: Int) -> Int {
        precondition(n > 0, "a run has at least one shard")
        let digest = SHA256.hash(data: bytes)
        let prefix = digest.prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        return Int(prefix % UInt64(n))
    }

    /// True when `token` belongs to this shard.
    public func holds(token: String) -> Bool {
        Self.index(ofToken: token, among: n) == k
    }

    /// True when a line of a token file belongs to this shard, given what places it: a
    /// token's lower-case hex, or the text of a line that holds no token (so that each
    /// malformed line is reported by exactly one shard too).
    func holds(line placement: [UInt8]) -> Bool {
        Self.index(of: placement, among: n) == k
    }

    /// What `--shard auto/N` found in the environment.
    public enum AutoChoice: Equatable, Sendable {
        /// Shard `shard`, read from `variable`.
        case chosen(shard: RunShard, variable: String)
        /// None of ``indexVariables`` is set.
        case noVariable
        /// `variable` is set to `value`, which is not a whole number from 0 to n-1.
        case outOfRange(variable: String, value: String)
    }

    /// Takes K of `auto/n` from the first of ``indexVariables`` set (to anything but the empty
    /// string) in `environment`.
    public static func auto(n: Int, environment: [String: String]) -> AutoChoice {
        for variable in indexVariables {
            guard let value = environment[variable], !value.isEmpty else { continue }
            guard let k = Int(value.trimmingCharacters(in: .whitespaces)), (0..<n).contains(k) else {
                return .outOfRange(variable: variable, value: value)
            }
            return .chosen(shard: RunShard(k: k, n: n), variable: variable)
        }
        return .noVariable
    }
}
