import Foundation
import LocalGateway
import PushStore
import TestSupport
import Testing

@testable import PushGateway

/// Every reason LocalGateway can answer with is produced here and parsed by the client into
/// the right APNsReason with the right status.
@Suite(.timeLimit(.minutes(2))) struct ReasonTests {
    /// A request as sent on the wire, for what PushNotification refuses to build.
    struct RawCase: Sendable, CustomTestStringConvertible {
        var name: String
        var method = "POST"
        var path = "/3/device/\(Fixtures.token.hex)"
        var headers: [String: [String]] = [:]
        var body: [UInt8] = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        var status: Int
        var reason: APNsReason
        var testDescription: String { name }

        func wireHeaders(authority: String) -> [(String, String)] {
            var result: [(String, String)] = [
                (":method", method), (":scheme", "https"), (":path", path), (":authority", authority),
            ]
            var fields: [String: [String]] = [APNsHeader.topic: ["com.example.app"], APNsHeader.pushType: ["alert"]]
            fields.merge(headers) { _, new in new }
            for (name, values) in fields.sorted(by: { $0.key < $1.key }) {
                for value in values { result.append((name, value)) }
            }
            return result
        }
    }

    static let rawCases: [RawCase] = [
        RawCase(name: "GET", method: "GET", status: 405, reason: .methodNotAllowed),
        RawCase(name: "wrong path", path: "/2/device/\(Fixtures.token.hex)", status: 404, reason: .badPath),
        RawCase(name: "no token in path", path: "/3/device/", status: 400, reason: .missingDeviceToken),
        RawCase(name: "non-hex token", path: "/3/device/xyz123", status: 400, reason: .badDeviceToken),
        RawCase(name: "odd-length token", path: "/3/device/abc", status: 400, reason: .badDeviceToken),
        RawCase(
            name: "topic twice",
            headers: [APNsHeader.topic: ["com.example.app", "com.example.app"]],
            status: 400,
            reason: .duplicateHeaders
        ),
        RawCase(
            name: "apns-id not a UUID",
            headers: [APNsHeader.id: ["not-a-uuid"]],
            status: 400,
            reason: .badMessageId
        ),
        RawCase(
            name: "unknown push type",
            headers: [APNsHeader.pushType: ["bogus"]],
            status: 400,
            reason: .invalidPushType
        ),
        RawCase(name: "priority 7", headers: [APNsHeader.priority: ["7"]], status: 400, reason: .badPriority),
        RawCase(
            name: "background at priority 10",
            headers: [APNsHeader.pushType: ["background"], APNsHeader.priority: ["10"]],
            status: 400,
            reason: .badPriority
        ),
        RawCase(
            name: "expiration not a number",
            headers: [APNsHeader.expiration: ["tomorrow"]],
            status: 400,
            reason: .badExpirationDate
        ),
        RawCase(
            name: "collapse id of 65 bytes",
            headers: [APNsHeader.collapseID: [String(repeating: "x", count: 65)]],
            status: 400,
            reason: .badCollapseId
        ),
        RawCase(name: "empty payload", body: [], status: 400, reason: .payloadEmpty),
        RawCase(
            name: "payload over 4096",
            body: Array(("{\"a\":\"" + String(repeating: "x", count: 4_100) + "\"}").utf8),
            status: 413,
            reason: .payloadTooLarge
        ),
        RawCase(
            name: "payload not JSON (closest documented reason)",
            body: Array("not json".utf8),
            status: 400,
            reason: .payloadEmpty
        ),
    ]

    @Test(arguments: rawCases)
    func rawRequestGetsItsReason(_ testCase: RawCase) async throws {
        try await RunningGateway.withConnection(.certificate(try Fixtures.universal())) { running, connection in
            let response = try await connection.send(
                headers: testCase.wireHeaders(authority: connection.authority),
                body: testCase.body
            )
            #expect(response.status == testCase.status)
            #expect(response.reason == testCase.reason)
            #expect(response.reason?.status == testCase.status)
            #expect(response.reason?.isKnown == true)
            #expect(response.apnsID != nil)
            #expect(running.gateway.statistics.rejected[testCase.reason.rawValue] == 1)
        }
    }

    @Test func voipPayloadMayBe5120Bytes() async throws {
        try await RunningGateway.with { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal()))
            defer { Task { await connection.close() } }
            let payload = Array(("{\"a\":\"" + String(repeating: "x", count: 5_000) + "\"}").utf8)
            var notification = PushNotification(
                deviceToken: Fixtures.token,
                topic: "com.example.app.voip",
                pushType: .voip,
                payload: payload
            )
            #expect(try await connection.send(notification).status == 200)
            notification.pushType = .alert
            notification.topic = "com.example.app"
            // The client refuses before sending, with the actual size in the message.
            let error = await gatewayError { _ = try await connection.send(notification) }
            #expect(error?.code == .invalidNotification)
            #expect(error?.message.contains("\(payload.count) bytes") == true)
        }
    }

    @Test func registryAnswersBadDeviceTokenNotForTopicAndUnregistered() async throws {
        let otherEnvironment = try DeviceToken("aa" + String(repeating: "01", count: 31))
        let otherTopic = try DeviceToken("bb" + String(repeating: "02", count: 31))
        let gone = try DeviceToken("cc" + String(repeating: "03", count: 31))
        let unknown = try DeviceToken("dd" + String(repeating: "04", count: 31))
        let registryFile = try Fixtures.temporaryFile(
            "registry.json",
            contents: """
                {"\(Fixtures.token.hex.uppercased())": {"topic": "com.example.app", "environment": "sandbox"},
                 "\(otherEnvironment.hex)": {"topic": "com.example.app", "environment": "production"},
                 "\(otherTopic.hex)": {"topic": "com.example.other", "environment": "sandbox"},
                 "\(gone.hex)": {"topic": "com.example.app", "environment": "sandbox", "unregistered_at": 1700000000123}}
                """
        )
        try await RunningGateway.Setup(configure: { $0.deviceRegistryFile = registryFile }).run(
            connecting: .certificate(try Fixtures.universal())
        ) { running, connection in
            func send(_ token: DeviceToken) async throws -> PushResponse {
                var notification = try PushNotification.alert()
                notification.deviceToken = token
                return try await connection.send(notification)
            }
            #expect(try await send(Fixtures.token).status == 200)
            let wrongEnvironment = try await send(otherEnvironment)
            #expect(wrongEnvironment.status == 400 && wrongEnvironment.reason == .badDeviceToken)
            let unknownToken = try await send(unknown)
            #expect(unknownToken.status == 400 && unknownToken.reason == .badDeviceToken)
            let wrongTopic = try await send(otherTopic)
            #expect(wrongTopic.status == 400 && wrongTopic.reason == .deviceTokenNotForTopic)
            let unregistered = try await send(gone)
            #expect(unregistered.status == 410)
            #expect(unregistered.reason == .unregistered)
            #expect(unregistered.timestamp == Date(timeIntervalSince1970: 1_700_000_000.123))
        }
    }

    @Test(arguments: [(429, APNsReason.tooManyRequests), (500, .internalServerError), (503, .serviceUnavailable)])
    func injectedFaultsUseTheirReasons(_ status: Int, _ reason: APNsReason) async throws {
        let running = try await RunningGateway.start { configuration in
            switch status {
            case 429: configuration.faults.tooManyRequestsRate = 1
            case 500: configuration.faults.internalServerErrorRate = 1
            default: configuration.faults.serviceUnavailableRate = 1
            }
        }
        defer { Task { await running.stop() } }
        let connection = try await running.connect(.certificate(try Fixtures.universal()))
        defer { Task { await connection.close() } }
        let response = try await connection.send(try .alert())
        #expect(response.status == status)
        #expect(response.reason == reason)
        #expect(response.isRetryable)
        #expect(reason.isRetryable)
    }

    @Test func faultFractionsAreSeededAndRepeat() async throws {
        func run() async throws -> [Int] {
            let running = try await RunningGateway.start {
                $0.faults.serviceUnavailableRate = 0.5
                $0.faults.seed = 42
            }
            let connection = try await running.connect(.certificate(try Fixtures.universal()))
            var statuses: [Int] = []
            for _ in 0..<20 { statuses.append(try await connection.send(try .alert()).status) }
            await connection.close()
            await running.stop()
            return statuses
        }
        let first = try await run()
        #expect(first.contains(200) && first.contains(503))
        #expect(try await run() == first)
    }
}
