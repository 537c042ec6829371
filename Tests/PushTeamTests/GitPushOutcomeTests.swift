import Foundation
import TestSupport
import Testing

@testable import PushTeam

/// What became of a push is read from git's porcelain status line, never from its words: a
/// remote that moved on is told from any other failure, with the real git.
struct GitPushOutcomeTests {
    static let commit = [
        "-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "--quiet", "--allow-empty", "-m",
    ]

    @Test func aRemoteThatMovedOnIsToldFromAnyOtherFailure() async throws {
        let folder = try TemporaryFolder()
        let bare = folder.path("remote.git")
        let here = Git(directory: folder.url.path)
        try await here.must(["init", "--quiet", "--bare", bare], what: "make the remote")
        for clone in ["a", "b"] {
            try await here.must(["clone", "--quiet", "--", bare, folder.path(clone)], what: "clone")
        }
        let a = Git(directory: folder.path("a"))
        let b = Git(directory: folder.path("b"))
        try await a.must(Self.commit + ["one"], what: "commit")
        #expect(try await a.push() == .pushed)
        try await b.must(Self.commit + ["two"], what: "commit")
        #expect(try await b.push() == .remoteAhead)
        // A remote that is gone is another failure, kept in git's words.
        try FileManager.default.removeItem(atPath: bare)
        let gone = try await b.push()
        #expect(gone != .remoteAhead && gone != .pushed, "\(gone)")
    }
}
