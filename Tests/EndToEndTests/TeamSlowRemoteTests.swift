import Foundation
import TestSupport
import Testing

/// A remote that is slow to take a push (a bare repository whose pre-receive hook waits until the
/// test lets it go on) keeps
/// no other command of the store waiting: a change's push and a sync's push run after the store's
/// lock is released, so the lock is free and `list` answers while git is still pushing.
@Suite(.serialized, .needsSecretService)
struct TeamSlowRemoteTests {
    typealias Member = TeamStoreTests.Member

    /// A command's result, filled in on the thread that runs it.
    final class Outcome: @unchecked Sendable {
        var result: CLI.Result?
        var error: (any Error)?
        let finished = DispatchSemaphore(value: 0)
    }

    static func inBackground(_ body: @escaping @Sendable () throws -> CLI.Result) -> Outcome {
        let outcome = Outcome()
        Thread.detachNewThread {
            do { outcome.result = try body() } catch { outcome.error = error }
            outcome.finished.signal()
        }
        return outcome
    }

    /// Waits up to `seconds` for `path` to exist.
    static func waitFor(_ path: String, seconds: Double) -> Bool {
        waitUntil(timeout: seconds) { FileManager.default.fileExists(atPath: path) }
    }

    /// While the remote holds a push, the store's lock is free and the store answers.
    static func expectStoreFreeDuringPush(_ alice: Member, markers: String, alias: String) throws {
        #expect(waitFor(markers + ".started", seconds: 90), "the push never reached the remote")
        try CLI.runProgram("flock", ["--nonblock", "--exclusive", alice.store + "/.lock", "true"])
            .succeeded(context: "the store's lock is held while git pushes")
        try alice.run(["list"]).succeeded(stdout: alias)
        #expect(
            !FileManager.default.fileExists(atPath: markers + ".done"),
            "list answered only after the push had ended"
        )
        // The barrier the hook waits at: the push goes on only now.
        _ = FileManager.default.createFile(atPath: markers + ".release", contents: nil)
    }

    @Test func aSlowPushKeepsNoOtherCommandWaiting() throws {
        let work = try TemporaryFolder()
        let fixtures = try TemporaryFolder()
        let (bare, alice) = try TeamStoreTests.aliceStartsATeam(in: work)

        // From here on, the remote accepts a push only once the test has released it (a file it
        // waits for: at most a minute, so that a test that failed before releasing ends), saying
        // when the push starts and ends.
        let markers = work.path("push")
        let hook = bare + "/hooks/pre-receive"
        try """
        #!/bin/sh
        cat >/dev/null
        touch '\(markers).started'
        i=0
        while [ ! -e '\(markers).release' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
        touch '\(markers).done'

        """.write(toFile: hook, atomically: true, encoding: .utf8)
        #expect(chmod(hook, 0o755) == 0)

        // A change: committed under the lock, pushed after it.
        let one = try TestPKI.mint(in: fixtures, name: "one", bundle: "com.example.slow-one", days: 300)
        let importing = Self.inBackground { try alice.run(["import", one]) }
        try Self.expectStoreFreeDuringPush(alice, markers: markers, alias: "com.example.slow-one-universal")
        importing.finished.wait()
        try #require(importing.result, "\(String(describing: importing.error))").succeeded(
            stderr: "committed and pushed \"Import com.example.slow-one-universal"
        )

        // A sync: its push (of a commit made while the remote was away) runs without the lock.
        try FileManager.default.moveItem(atPath: bare, toPath: bare + ".away")
        let two = try TestPKI.mint(in: fixtures, name: "two", bundle: "com.example.slow-two", days: 300)
        let offline = try alice.run(["import", two])
        #expect(offline.stderr.contains("here only"), "\(offline.stderr)")
        try FileManager.default.moveItem(atPath: bare + ".away", toPath: bare)
        for suffix in [".started", ".done", ".release"] {
            try? FileManager.default.removeItem(atPath: markers + suffix)
        }
        let syncing = Self.inBackground { try alice.run(["team", "sync"]) }
        try Self.expectStoreFreeDuringPush(alice, markers: markers, alias: "com.example.slow-two-universal")
        syncing.finished.wait()
        try #require(syncing.result, "\(String(describing: syncing.error))").succeeded(stdout: "Pushed 1 commit(s)")
        let log = try CLI.runProgram("git", ["-C", bare, "log", "--format=%s"]).stdout
        #expect(log.contains("Import com.example.slow-two-universal"), "\(log)")
    }
}
