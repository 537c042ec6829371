import ArgumentParser
import Foundation
import PushBulk

/// `send --shard K/N` or `--shard auto/N`: which part of a token list this worker sends, K
/// counting from 0 as the batch systems' index variables do.
enum ShardOption {
    /// Most shards a list divides into.
    static let maximumCount = 100_000

    /// The shard `text` names, with the variable K was read from for `auto/N`.
    static func resolve(
        _ text: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (shard: RunShard, variable: String?) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int(parts[1]) else {
            throw ValidationError(
                "--shard \(text): give K/N (shard K of N, K from 0 to N-1, e.g. --shard 0/4) or auto/N (K from the batch system's index variable)."
            )
        }
        guard (1...maximumCount).contains(n) else {
            throw ValidationError("--shard \(text): N, the number of shards, is from 1 to \(maximumCount).")
        }
        if parts[0] == "auto" {
            switch RunShard.auto(n: n, environment: environment) {
            case .chosen(let shard, let variable):
                return (shard, variable)
            case .noVariable:
                let names = RunShard.indexVariables
                throw ValidationError(
                    "--shard auto/\(n) takes K from \(names.dropLast().joined(separator: ", ")) or \(names.last ?? ""), and none is set here: give --shard K/\(n) (K from 0 to \(n - 1))."
                )
            case .outOfRange(let variable, let value):
                throw ValidationError(
                    "--shard auto/\(n): \(variable) is \"\(value)\", not a shard from 0 to \(n - 1). Number the array's tasks from 0 (e.g. Slurm's --array=0-\(n - 1)) with as many tasks as shards, or give --shard K/\(n)."
                )
            }
        }
        guard let k = Int(parts[0]), (0..<n).contains(k) else {
            throw ValidationError(
                "--shard \(text): K counts from 0, so the shards of \(n) are 0/\(n) to \(n - 1)/\(n)."
            )
        }
        return (RunShard(k: k, n: n), nil)
    }
}
