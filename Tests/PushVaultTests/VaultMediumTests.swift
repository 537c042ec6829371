import CredentialFormats
import Foundation
import PushStore
import Testing

@testable import PushVault
@testable import PushVaultStore

/// The store's index and files in KV: one writer at a time, a lock left by a dead writer taken
/// over, and an index that moved under a writer never overwritten.
@Suite(
    "A store's records in Vault",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage)),
    .baoDevServer,
    .timeLimit(.minutes(2))
)
struct VaultMediumTests {
    func medium() throws -> VaultMedium {
        VaultMedium(kv: try server().rootClient().kv(), prefix: "medium-\(UUID().uuidString.prefix(8))")
    }

    @Test("Records are written, read, listed and removed; a removed one keeps its versions")
    func records() async throws {
        let medium = try medium()
        try await medium.exclusive {
            try await medium.write([1, 2, 3], to: "credentials/a.p12")
            try await medium.writeIndex(Array("{}".utf8))
        }
        #expect(try await medium.read("credentials/a.p12") == [1, 2, 3])
        #expect(try await medium.list("credentials") == ["a.p12"])
        #expect(try await medium.remove("credentials/a.p12"))
        #expect(try await medium.read("credentials/a.p12") == nil)
        #expect(try await medium.list("credentials").isEmpty)
        #expect(try await !medium.remove("credentials/a.p12"))
        let metadata = try await medium.kv.metadata("\(medium.prefix)/files/credentials/a.p12")
        #expect(metadata.versions[1]?.destroyed == false, "deleted, not destroyed: an operator can undelete it")
    }

    @Test("A writer that waited while another changed the index is refused, and writes nothing")
    func waiterIsRefusedWhenTheIndexMoved() async throws {
        var waiting = try medium()
        waiting.lockWait = .seconds(20)
        let medium = waiting
        // The second writer tells when its create is refused: it is then waiting for the lock.
        let (secondWaits, waits) = AsyncStream<Void>.makeStream()
        var waiter = waiting
        waiter.atLockStep = { step in if step == .createRefused { waits.yield() } }
        let secondMedium = waiter
        let (entered, enters) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await medium.exclusive {
                enters.yield()
                // The first writer changes the index only once the second waits for the lock
                // (the suite's time limit ends a hung test).
                var waiting = secondWaits.makeAsyncIterator()
                guard await waiting.next() != nil else { throw SecondNeverWaited() }
                try await medium.writeIndex(Array("{\"first\":1}".utf8))
            }
        }
        // The second writer starts once the first holds the lock.
        var entering = entered.makeAsyncIterator()
        _ = await entering.next()
        let second: (any Error)?
        do {
            try await secondMedium.exclusive { try await medium.writeIndex(Array("{\"second\":1}".utf8)) }
            second = nil
        } catch {
            second = error
        }
        try await first.value
        let refusal = try #require(second as? CredentialError)
        #expect(refusal.message.contains("while this command waited"), "\(refusal.message)")
        #expect(refusal.message.contains("nothing was changed"))
        let index = try await medium.read("index.json")
        #expect(index == Array("{\"first\":1}".utf8))
    }

    @Test("A lock released between a waiting writer's refused create and its look is taken, not reported missing")
    func lockReleasedInBetween() async throws {
        var released = try medium()
        let kv = released.kv
        let lockPath = released.lockPath
        let now = String(Int(Date().timeIntervalSince1970))
        try await kv.write(lockPath, data: ["nonce": "other", "holder": "another writer", "since": now], cas: 0)
        // The holder releases (destroying the entry, metadata and all) exactly when this writer's
        // create has been refused and it has not yet looked: once only.
        let refusals = Refusals()
        released.atLockStep = { step in
            guard step == .createRefused, refusals.count() == 1 else { return }
            try await kv.destroyAll(lockPath)
        }
        let medium = released
        try await medium.exclusive { try await medium.writeIndex(Array("{}".utf8)) }
        #expect(refusals.seen >= 1, "the release happened in between")
        #expect(try await kv.readIfPresent(lockPath) == nil, "the lock was released after the change")
        let index = try await medium.read("index.json")
        #expect(index == Array("{}".utf8))
    }

    @Test("A lock another writer creates between a waiting writer's look and its takeover stays that writer's")
    func lockCreatedInBetween() async throws {
        var contended = try medium()
        let kv = contended.kv
        let lockPath = contended.lockPath
        let indexPath = "\(contended.prefix)/files/index.json"
        // A deleted lock (its metadata remains): the case a waiting writer replaces by version.
        try await kv.write(lockPath, data: ["nonce": "gone", "holder": "an old writer", "since": "0"], cas: 0)
        try await kv.delete(lockPath)
        // Right after this writer found no live entry, a third writer creates the lock, holds
        // it until this writer has come back and been refused, and releases it, checking that it
        // stayed its own and that nothing was written meanwhile.
        let third = ThirdWriter()
        // Once the third writer holds the lock, this writer's next refused create shows that its
        // takeover failed and that it came back to find the lock held: the third writer then looks.
        let (refusedAgain, refused) = AsyncStream<Void>.makeStream()
        contended.atLockStep = { step in
            if step == .createRefused, third.hasStarted { refused.yield() }
            guard step == .foundNone, third.start() else { return }
            let metadata = try await kv.metadata(lockPath)
            let since = String(Int(Date().timeIntervalSince1970))
            let fields = ["nonce": "third", "holder": "a third writer", "since": since]
            _ = try await kv.write(lockPath, data: fields, cas: metadata.currentVersion)
            Task.detached {
                var refusals = refusedAgain.makeAsyncIterator()
                _ = await refusals.next()
                let lock = try await kv.readIfPresent(lockPath)
                let index = try await kv.readIfPresent(indexPath)
                third.finish(heldToTheEnd: lock?.data["nonce"] == "third", indexUntouched: index == nil)
                try await kv.destroyAll(lockPath)
            }
        }
        let medium = contended
        try await medium.exclusive { try await medium.writeIndex(Array("{}".utf8)) }
        let outcome = third.outcome
        #expect(outcome.heldToTheEnd == true, "the third writer's lock was taken from it")
        #expect(outcome.indexUntouched == true, "the index was written while the third writer held the lock")
        #expect(try await medium.read("index.json") == Array("{}".utf8))
    }

    @Test("Six writers at once: each change lands once; a writer that waited is refused in words and tries again")
    func manyWriters() async throws {
        var waiting = try medium()
        waiting.lockWait = .seconds(60)
        let medium = waiting
        let writers = 6
        let writesEach = 4
        // Each writer's outcomes: its changes that landed, and any failure other than the
        // refusal a writer that waited gets. The lock changes hands often here, so a writer also
        // meets it released between two of its own calls.
        let outcomes = await withTaskGroup(of: (landed: Int, refused: Int, other: [String]).self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var landed = 0
                    var refused = 0
                    var other: [String] = []
                    while landed < writesEach, other.isEmpty {
                        do {
                            let written = landed
                            try await medium.exclusive {
                                try await medium.writeIndex(Array("{\"writer\":\(writer),\"n\":\(written)}".utf8))
                            }
                            landed += 1
                        } catch let error as CredentialError where error.message.contains("while this command waited") {
                            refused += 1
                        } catch {
                            other.append("\(error)")
                        }
                    }
                    return (landed, refused, other)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.flatMap(\.other).isEmpty, "\(outcomes.flatMap(\.other))")
        #expect(outcomes.map(\.landed) == Array(repeating: writesEach, count: writers))
        // Every landed change is one version of the index: none lost, none written twice.
        let metadata = try await medium.kv.metadata("\(medium.prefix)/files/index.json")
        #expect(metadata.currentVersion == writers * writesEach)
        print("six writers: \(outcomes.map(\.refused).reduce(0, +)) refusals on the way")
    }

    @Test("A lock older than a minute is taken over; an index written by someone else meanwhile is not overwritten")
    func staleLockAndIndexCAS() async throws {
        let medium = try medium()
        let kv = medium.kv
        let old = String(Int(Date().timeIntervalSince1970) - 120)
        try await kv.write(
            "\(medium.prefix)/lock",
            data: ["nonce": "gone", "holder": "a dead writer", "since": old],
            cas: 0
        )
        let outcome: (any Error)?
        do {
            try await medium.exclusive {
                // Someone writes the index behind the lock's back (a writer that still thinks it holds it).
                _ = try await kv.write(
                    "\(medium.prefix)/files/index.json",
                    data: ["value": Data("{}".utf8).base64EncodedString()]
                )
                try await medium.writeIndex(Array("{}".utf8))
            }
            outcome = nil
        } catch {
            outcome = error
        }
        // Taken over, not waited for: a writer that waited would end refused for the lock, not
        // for the index that moved.
        let refusal = try #require(outcome as? any ReportableError)
        #expect(refusal.code.rawValue == "vault_cas_mismatch", "\(refusal.message)")
        // The lock was released: the next writer gets it at once.
        try await medium.exclusive { try await medium.writeIndex(Array("{}".utf8)) }
    }

    @Test("A lock dated past its age bound in the future is stale and taken over at once; one within it is held")
    func lockFromTheFuture() async throws {
        var waiting = try medium()
        waiting.lockWait = .seconds(1)
        let medium = waiting
        let kv = medium.kv
        let future = String(Int(Date().timeIntervalSince1970) + 3_600)
        try await kv.write(
            medium.lockPath,
            data: ["nonce": "ahead", "holder": "a clock an hour ahead", "since": future],
            cas: 0
        )
        // Taken over, not waited for: with a one-second wait, a writer that waited would throw.
        try await medium.exclusive { try await medium.writeIndex(Array("{}".utf8)) }
        #expect(try await kv.readIfPresent(medium.lockPath) == nil, "released by the writer that took it over")

        // Within the bound the lock is another writer's: the writer waits, then gives up in words.
        let soon = String(Int(Date().timeIntervalSince1970) + 30)
        let lockVersion = try await kv.latest(medium.lockPath).version
        try await kv.write(
            medium.lockPath,
            data: ["nonce": "live", "holder": "a live writer", "since": soon],
            cas: lockVersion
        )
        let refusal: (any Error)?
        do {
            try await medium.exclusive { try await medium.writeIndex(Array("{}".utf8)) }
            refusal = nil
        } catch {
            refusal = error
        }
        let error = try #require(refusal as? CredentialError)
        #expect(error.message.contains("a live writer"), "\(error.message)")
        #expect(
            VaultMedium.isStale(
                KVEntry(data: ["since": "x"], version: 1, createdTime: nil),
                now: Date(),
                bound: .seconds(60)
            )
        )
    }
}

/// How many times a writer's create of the lock was refused.
private final class Refusals: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    var seen: Int { lock.withLock { value } }
    /// Counts one more refusal; returns the count with it.
    func count() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

/// The second writer never came to wait for the lock the first held.
private struct SecondNeverWaited: Error, CustomStringConvertible {
    var description: String { "the second writer never waited for the lock" }
}

/// A third writer that takes the lock in the middle of another's takeover: what it saw.
private final class ThirdWriter: @unchecked Sendable {
    private let lock = NSLock()
    private var started = false
    private var seen: (heldToTheEnd: Bool?, indexUntouched: Bool?) = (nil, nil)
    var outcome: (heldToTheEnd: Bool?, indexUntouched: Bool?) { lock.withLock { seen } }
    var hasStarted: Bool { lock.withLock { started } }
    /// True the first time only.
    func start() -> Bool {
        lock.withLock {
            defer { started = true }
            return !started
        }
    }
    func finish(heldToTheEnd: Bool, indexUntouched: Bool) {
        lock.withLock { seen = (heldToTheEnd, indexUntouched) }
    }
}
