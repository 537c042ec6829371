import Dispatch
import Foundation
import Testing

@testable import PushStore

/// Calls from several threads on one connection to the real session bus (of
/// scripts/with-secret-service) overlap, and each caller gets its own answers: the bus's error
/// for a name nobody owns quotes the name, so an answer handed to the wrong caller shows.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["APNSCTL_INSIDE_SECRET_SERVICE"] == "1",
        "needs the private session bus of scripts/with-secret-service"
    )
)
struct SessionBusConcurrencyTests {
    static func ownerOf(_ name: String) -> SessionBusConnection.Call {
        .init(
            destination: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "GetNameOwner",
            arguments: [.string(name)]
        )
    }

    @Test func overlappingCallsEachGetTheirOwnAnswers() throws {
        let connection = try SessionBusConnection.connect(
            addresses: try BusAddress.sessionAddresses(),
            deadline: Deadline(after: 5)
        )
        let threads = 8
        let rounds = 60
        let mismatches = LockedBox(0)
        let failures = LockedBox([String]())
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0..<rounds {
                let names = (0..<(1 + round % 3)).map { "org.example.thread\(thread).round\(round).call\($0)" }
                do {
                    let replies = try connection.call(names.map(Self.ownerOf), deadline: Deadline(after: 10))
                    for (name, reply) in zip(names, replies) {
                        let said = reply.body.first?.stringValue ?? ""
                        if reply.kind != .error || !said.contains("'\(name)'") { mismatches.withLock { $0 += 1 } }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(mismatches.withLock { $0 } == 0)
        #expect(!connection.isBroken)
        // And the connection goes on as one caller's.
        let owner = try connection.call([Self.ownerOf("org.freedesktop.DBus")], deadline: Deadline(after: 5))
        #expect(owner.first?.kind == .methodReturn)
    }
}

/// A value behind a lock, for the threads of a test.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
