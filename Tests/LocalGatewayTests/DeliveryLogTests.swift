import Foundation
import NIOCore
import NIOPosix
import PushCore
import PushGateway
import TestSupport
import Testing

@testable import LocalGateway

/// The delivery log is written off the event loop, in the order lines were handed over, and is
/// complete once the gateway has stopped.
struct DeliveryLogTests {
    @Test func linesHandedOverOnALoopAreWrittenOffItInOrder() async throws {
        // As the gateway does at start: a write on an event loop stops a debug build here.
        BlockingWork.installEventLoopDetector { MultiThreadedEventLoopGroup.currentEventLoop != nil }
        let path = try Fixtures.temporaryPath("delivery.jsonl")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let log = DeliveryLog(handle: try #require(FileHandle(forWritingAtPath: path)))
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let written = try await loop.submit {
            (0..<500).map { log.append(Array("{\"n\":\($0)}\n".utf8), on: loop) }
        }.get()
        let results = try await EventLoopFuture.whenAllSucceed(written, on: loop).get()
        #expect(results.allSatisfy { $0 })
        // A line past the bound of what may wait is refused, as a full disk refuses it.
        let tooLong = [UInt8](repeating: 0x20, count: DeliveryLog.maxPendingBytes + 1)
        #expect(try await log.append(tooLong, on: loop).get() == false)
        await log.close()
        #expect(try await log.append(Array("{}\n".utf8), on: loop).get() == false, "nothing is written after close")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines == (0..<500).map { "{\"n\":\($0)}"[...] })
    }

    @Test func theLogIsCompleteWhenStopReturns() async throws {
        let path = try Fixtures.temporaryPath("notifications.jsonl")
        let running = try await RunningGateway.start(.sandbox) {
            $0.clientCAFiles = []
            $0.logFile = path
        }
        let gateway = running.gateway
        let connection = try await running.connect(.token(try Fixtures.providerKey()))
        let notification = try Fixtures.alert()
        let accepted = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<100 {
                var one = notification
                one.apnsID = UUID()
                group.addTask { [one] in
                    let response = try await connection.send(one)
                    return response.status == 200 ? response.apnsID?.uuidString.lowercased() : nil
                }
            }
            var ids: Set<String> = []
            for try await id in group { if let id { ids.insert(id) } }
            return ids
        }
        #expect(accepted.count == 100)
        await connection.close()
        try await gateway.stop()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let logged = try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try #require(object?["apns_id"] as? String).lowercased()
        }
        #expect(logged.count == 100)
        #expect(Set(logged) == accepted)
    }
}
