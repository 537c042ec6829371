import Foundation
import PushCore
import PushGateway
import TestSupport
import Testing

@testable import LocalGateway

/// The device display and the streams in flight as a running gateway keeps them, over real
/// connections, and the files `serve` writes from them.
@Suite struct DeviceDisplayGatewayTests {
    static var followed: RunningGateway.Setup {
        RunningGateway.Setup(configure: {
            $0.display = DeviceDisplay.Limits()
            $0.recordsStreamsInFlight = true
        })
    }

    static func alert(id: UUID = UUID(), collapse: String? = nil) throws -> PushNotification {
        var notification = try PushNotification.alert(id: id)
        notification.collapseID = collapse
        return notification
    }

    static func background(id: UUID = UUID()) -> PushNotification {
        PushNotification(
            deviceToken: Fixtures.token,
            topic: "com.example.app",
            pushType: .background,
            priority: .powerConsiderate,
            apnsID: id,
            payload: Array(#"{"aps":{"content-available":1}}"#.utf8)
        )
    }

    @Test func whatWasDeliveredAndWhatAPersonWouldSee() async throws {
        try await Self.followed.run(connecting: .certificate(try Fixtures.universal())) { running, connection in
            // Two notifications with one collapse id: shown as one.
            #expect(try await connection.send(try Self.alert(collapse: "score")).status == 200)
            #expect(try await connection.send(try Self.alert(collapse: "score")).status == 200)
            // A resend of one apns-id with its collapse id: delivered twice, shown once.
            let resent = UUID()
            #expect(try await connection.send(try Self.alert(id: resent, collapse: resent.uuidString)).status == 200)
            #expect(try await connection.send(try Self.alert(id: resent, collapse: resent.uuidString)).status == 200)
            // A background push: delivered, not shown.
            #expect(try await connection.send(Self.background()).status == 200)

            let display = try #require(running.gateway.deviceDisplay)
            let counters = try #require(display.counters[Fixtures.token.hex])
            #expect(counters.delivered == 5)
            #expect(counters.shown == 2)
            #expect(counters.deliveredTwice == 1)
            #expect(counters.shownTwice == 0)
            let held = try #require(display.held[Fixtures.token.hex])
            #expect(held.map(\.collapseID) == ["score", resent.uuidString])
            #expect(held.last?.apnsID == resent.uuidString.lowercased())
            #expect(running.gateway.statistics.accepted == display.totals.delivered)
        }
    }

    @Test func aDeliveryWhoseAnswerIsLostIsStillDelivered() async throws {
        try await RunningGateway.Setup(configure: {
            $0.display = DeviceDisplay.Limits()
            $0.faults.dropAfterAccepted = 1
        }).run { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal()))
            defer { Task { await connection.close() } }
            let lost = UUID()
            await #expect(throws: (any Error).self) { try await connection.send(try Self.alert(id: lost)) }
            let display = try #require(running.gateway.deviceDisplay)
            #expect(display.counters[Fixtures.token.hex]?.delivered == 1)
            #expect(display.held[Fixtures.token.hex]?.map(\.apnsID) == [lost.uuidString.lowercased()])
        }
    }

    @Test func notFollowedUnlessAsked() async throws {
        try await RunningGateway.Setup().run(connecting: .certificate(try Fixtures.universal())) {
            running,
            connection in
            let answer = try await connection.send(try Self.alert())
            #expect(answer.status == 200)
            #expect(running.gateway.deviceDisplay == nil)
            #expect(running.gateway.streamsInFlight == nil)
        }
    }

    @Test func streamsInFlightFollowTheConnectionsOpenStreams() async throws {
        try await RunningGateway.Setup(configure: {
            $0.display = DeviceDisplay.Limits()
            $0.recordsStreamsInFlight = true
            $0.faults.latency = 0.1
        }).run(connecting: .certificate(try Fixtures.universal())) { running, connection in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<20 { group.addTask { try await connection.send(try Self.alert()).status } }
                for try await status in group { #expect(status == 200) }
            }
            let report = try #require(running.gateway.streamsInFlight)
            let observed = running.gateway.statistics.maxConcurrentStreamsObserved
            // One connection: its peak, the gateway's most at once and the series agree.
            #expect(observed >= 1)
            #expect(report.peakByConnection.values.max() == observed)
            #expect(report.maxOpen.max() == observed)
            #expect(report.intervalMilliseconds == 100)
        }
    }

    @Test func theStatisticsAndShownFilesHoldTheDisplay() async throws {
        let folder = try TemporaryFolder()
        try await Self.followed.run(connecting: .certificate(try Fixtures.universal())) { running, connection in
            #expect(try await connection.send(try Self.alert(collapse: "x")).status == 200)
            #expect(try await connection.send(try Self.alert(collapse: "x")).status == 200)
            #expect(try await connection.send(Self.background()).status == 200)
            var files = LocalGateway.ServeFiles()
            files.statistics = folder.path("stats.json")
            files.shown = folder.path("shown.jsonl")
            try running.gateway.writeReports(files)

            let stats = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: folder.path("stats.json")))
                )
                    as? [String: Any]
            )
            // The statistics' own keys stay where they were.
            #expect(stats["accepted"] as? Int == 3)
            #expect(stats["max_concurrent_streams_observed"] is Int)
            let totals = try #require(stats["display"] as? [String: Any])
            #expect(totals["delivered"] as? Int == 3)
            #expect(totals["shown"] as? Int == 1)
            let devices = try #require(stats["devices"] as? [String: [String: Int]])
            #expect(
                devices[Fixtures.token.hex] == [
                    "delivered": 3, "shown": 1, "delivered_twice": 0, "shown_twice": 0, "evicted": 0,
                ]
            )
            #expect((stats["streams_in_flight"] as? [String: Any])?["interval_ms"] as? Int == 100)

            let lines = try String(contentsOfFile: folder.path("shown.jsonl"), encoding: .utf8)
                .split(separator: "\n")
                .map { try JSONDecoder().decode(LocalGateway.ShownLine.self, from: Data($0.utf8)) }
            #expect(lines.count == 1)
            #expect(lines.first?.deviceToken == Fixtures.token.hex)
            #expect(lines.first?.notifications.map(\.collapseID) == ["x"])
            #expect(lines.first?.notifications.first?.replacements == 1)
            // Private: they say which devices were sent what.
            for name in ["stats.json", "shown.jsonl"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: folder.path(name))
                #expect((attributes[.posixPermissions] as? Int) == 0o600)
            }
        }
    }
}
