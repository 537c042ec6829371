import Foundation
import TestSupport
import Testing

extension TeamForkTests {
    /// Bob merges the remote into his fork and, in the merge commit itself, writes a secret for
    /// mallory: that commit is the secret's last writer, judged by the list it holds (which names
    /// mallory), not the older commit that first wrote the file.
    @Test func aSecretWrittenInAMergeCommitIsJudgedByThatCommitsList() throws {
        let team = try Team()
        let alice = team.alice
        let bobPusher = try Pusher(team.work, name: "bob", remote: team.remote, environment: team.transport)
        #expect(try alice.run(["team", "remove", "bob"]).status == 0)
        try team.bobsFork(from: bobPusher)
        #expect(try bobPusher.git(["fetch", "--quiet", "origin"]).status == 0)
        let branch = try team.branch(of: bobPusher)
        try bobPusher.git(["merge", "--quiet", "--no-commit", "-s", "ours", "origin/\(branch)"]).succeeded()
        let alias = "com.example.fork1-universal"
        let file = try TeamTrustSupport.secretFile(of: alias, in: bobPusher.clone)
        try CLI.runProgram(
            "age",
            ["-e", "-r", team.mallory.recipient, "-o", file],
            stdin: "not the real secret\n"
        ).succeeded()
        #expect(try bobPusher.git(["commit", "--quiet", "--all", "-m", "Merge"]).status == 0)
        #expect(try bobPusher.git(["push", "--quiet", "origin", "HEAD:\(branch)"]).status == 0)

        let synced = try alice.run(["team", "sync"]).exited(1)
        let rotation = try #require(
            synced.stderr.split(separator: "\n").first { $0.contains(alias) },
            "\(synced.stderr)"
        )
        #expect(rotation.contains("mallory"), "\(rotation)")
    }
}
