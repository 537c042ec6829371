import CredentialFormats
import Foundation
import PushStore
import PushVaultStore
import Testing

@testable import PushVault

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
        try await onThread {
            try medium.exclusive {
                try medium.write([1, 2, 3], to: "credentials/a.p12")
                try medium.writeIndex(Array("{}".utf8))
            }
            #expect(try medium.read("credentials/a.p12") == [1, 2, 3])
            #expect(try medium.list("credentials") == ["a.p12"])
            #expect(try medium.remove("credentials/a.p12"))
            #expect(try medium.read("credentials/a.p12") == nil)
            #expect(try medium.list("credentials").isEmpty)
            #expect(try !medium.remove("credentials/a.p12"))
        }
        let metadata = try await medium.kv.metadata("\(medium.prefix)/files/credentials/a.p12")
        #expect(metadata.versions[1]?.destroyed == false, "deleted, not destroyed: an operator can undelete it")
    }

    @Test("A writer that waited while another changed the index is refused, and writes nothing")
    func waiterIsRefusedWhenTheIndexMoved() async throws {
        var waiting = try medium()
        waiting.lockWait = .seconds(20)
        let medium = waiting
        let entered = DispatchSemaphore(value: 0)
        let first = Task {
            try await onThread {
                try medium.exclusive {
                    entered.signal()
                    Thread.sleep(forTimeInterval: 1.5)
                    try medium.writeIndex(Array("{\"first\":1}".utf8))
                }
            }
        }
        // The second writer starts once the first holds the lock.
        await onThread { entered.wait() }
        let second = await onThread { () -> (any Error)? in
            do {
                try medium.exclusive { try medium.writeIndex(Array("{\"second\":1}".utf8)) }
                return nil
            } catch {
                return error
            }
        }
        try await first.value
        let refusal = try #require(second as? CredentialError)
        #expect(refusal.message.contains("while this command waited"), "\(refusal.message)")
        #expect(refusal.message.contains("nothing was changed"))
        let index = try await onThread { try medium.read("index.json") }
        #expect(index == Array("{\"first\":1}".utf8))
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
        let started = Date()
        let outcome = await onThread { () -> (any Error)? in
            do {
                try medium.exclusive {
                    // Someone writes the index behind the lock's back (a writer that still thinks it holds it).
                    _ = try VaultSecretStoreTestHook.write(kv, "\(medium.prefix)/files/index.json")
                    try medium.writeIndex(Array("{}".utf8))
                }
                return nil
            } catch {
                return error
            }
        }
        #expect(Date().timeIntervalSince(started) < 5, "the stale lock was taken over at once")
        let refusal = try #require(outcome as? any ReportableError)
        #expect(refusal.code.rawValue == "vault_cas_mismatch", "\(refusal.message)")
        // The lock was released: the next writer gets it at once.
        try await onThread { try medium.exclusive { try medium.writeIndex(Array("{}".utf8)) } }
    }
}

/// A KV write from a thread that is not a Vault request's own (the medium's calls wait on one).
enum VaultSecretStoreTestHook {
    static func write(_ kv: KVv2, _ path: String) throws -> Int {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<Int, any Error> = .success(0)
        Task.detached {
            do {
                result = .success(try await kv.write(path, data: ["value": Data("{}".utf8).base64EncodedString()]))
            } catch {
                result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try result.get()
    }
}

/// Runs blocking work (a medium's calls wait for Vault's answers) on a thread of its own, never
/// on Swift's shared pool, whose few threads the other suites' requests need meanwhile.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
