import Foundation
import NIOCore
import PushStore
import TestSupport
import Testing

@testable import PushGateway

/// Endpoints, reasons, responses and payloads: the values the CLI builds and reads.
@Suite struct EndpointTests {
    @Test func environmentsPickApplesHosts() throws {
        #expect(try Endpoint.resolve(environment: .production).endpoint == .production)
        #expect(
            try Endpoint.resolve(environment: .sandbox).endpoint
                == Endpoint(host: "api.sandbox.push.apple.com", port: 443)
        )
        #expect(
            try Endpoint.resolve(environment: .production, port: 2197).endpoint
                == Endpoint(host: "api.push.apple.com", port: 2197)
        )
        #expect(try Endpoint.resolve(environment: .sandbox).notices.isEmpty)
        #expect(Endpoint(host: "api.development.push.apple.com", port: 443).environment == .sandbox)
        #expect(Endpoint.custom(host: "127.0.0.1", port: 8443).environment == nil)
    }

    @Test(arguments: [
        ("gateway.push.apple.com:2195", Endpoint.production),
        ("gateway.sandbox.push.apple.com:2195", .sandbox),
        ("gateway.push.apple.com", .production),
        ("feedback.sandbox.push.apple.com:2196", .sandbox),
        ("api.push.apple.com:2195", .production),
        ("https://gateway.sandbox.push.apple.com:2195/", .sandbox),
    ])
    func legacyBinaryInterfaceIsMappedWithANotice(_ gateway: String, _ expected: Endpoint) throws {
        let resolution = try Endpoint.resolve(environment: nil, gateway: gateway)
        #expect(resolution.endpoint == expected)
        #expect(resolution.notices.count == 1)
        #expect(resolution.notices.first?.contains("31 March 2021") == true)
    }

    @Test func legacyPortAloneIsMapped() throws {
        let resolution = try Endpoint.resolve(environment: .production, port: 2195)
        #expect(resolution.endpoint == .production)
        #expect(resolution.notices.first?.contains("2195") == true)
    }

    @Test(arguments: [
        ("localhost:8443", "localhost", 8443),
        ("[::1]:2197", "::1", 2197),
        ("127.0.0.1:443", "127.0.0.1", 443),
        ("gw.example.com", "gw.example.com", 443),
        ("[::1]", "::1", 443),
    ])
    func gatewayAddressesParse(_ text: String, _ host: String, _ port: Int) throws {
        let endpoint = try Endpoint.resolve(environment: nil, gateway: text).endpoint
        #expect(endpoint.host == host)
        #expect(endpoint.port == port)
    }

    @Test("The spaces around a gateway address are those Foundation's whitespace set trims")
    func spacesAroundAnAddressAreTrimmedAsFoundationTrimsThem() throws {
        let texts = [
            " localhost:8443", "\tlocalhost:8443\t", "\u{A0}localhost:8443\u{3000}", "\u{2003} [::1]:2197 ",
            "localhost:8443\n", "\u{200B}localhost", "\u{FEFF}x", "   ", "", "a b", " \u{1F680} ",
        ]
        for text in texts {
            let trimmed = String(Endpoint.trimmingSpaces(text))
            #expect(trimmed == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
        }
        // Every Unicode scalar, around a name.
        var different: [String] = []
        for value in 0...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)gw\(scalar)"
            if String(Endpoint.trimmingSpaces(text)) != text.trimmingCharacters(in: .whitespaces) {
                different.append("U+" + String(value, radix: 16, uppercase: true))
            }
        }
        #expect(different.isEmpty, "trimmed differently: \(different)")
        #expect(try Endpoint.parse("\u{A0}\tgw.example.com:2197 ") == ("gw.example.com", 2197))
    }

    @Test func ipv6EndpointPrintsWithBrackets() {
        #expect(Endpoint.custom(host: "::1", port: 2197).description == "[::1]:2197")
    }

    @Test(arguments: ["localhost:0", "localhost:http", "[::1", "", ":443", "host:99999"])
    func badGatewayAddressesSayWhy(_ text: String) {
        #expect(throws: GatewayError.self) { try Endpoint.resolve(environment: nil, gateway: text) }
    }

    @Test(arguments: [
        ("tls", "before the TLS handshake"), ("http2", "after the TLS handshake"), ("tcp", "while connecting"),
    ])
    func aConnectionClosedUnderUsNamesTheServerAndThePhase(phase: String, words: String) {
        let error = GatewayConnection.setUpFailure(
            ChannelError.ioOnClosedChannel,
            phase: phase,
            address: "127.0.0.1:2197"
        )
        #expect(error.code == .connectionClosed)
        #expect(error.message.contains("127.0.0.1:2197"))
        #expect(error.message.contains(words))
        #expect(!error.message.contains("I/O on closed channel"))
        #expect(error.isRetryable)
        // Anything else still says what it was, naming the server.
        let other = GatewayConnection.setUpFailure(
            ChannelError.inappropriateOperationForState,
            phase: "tls",
            address: "h:1"
        )
        #expect(other.code == .connectFailed)
        #expect(other.message.contains("h:1"))
    }

    @Test func contradictoryEnvironmentIsRefused() {
        let error = #expect(throws: GatewayError.self) {
            try Endpoint.resolve(environment: .sandbox, gateway: "api.push.apple.com")
        }
        #expect(error?.code == .invalidEndpoint)
    }
}

@Suite struct ResponseTests {
    @Test func unknownReasonIsKeptAsData() throws {
        let body = Array(#"{"reason":"BrandNewReason"}"#.utf8)
        let response = PushResponse(status: 400, headers: [], body: body, latency: 0)
        #expect(response.status == 400)
        #expect(response.reason?.rawValue == "BrandNewReason")
        #expect(response.reason?.isKnown == false)
        #expect(response.reason == .unknown("BrandNewReason"))
        #expect(response.reason?.explanation.contains("BrandNewReason") == true)
        #expect(response.reason?.isRetryable == false)
    }

    @Test func nonJSONBodyKeepsTheStatus() {
        let body = Array("<html><body>502 Bad Gateway</body></html>".utf8)
        let response = PushResponse(status: 502, headers: [("apns-id", "not-a-uuid")], body: body, latency: 0)
        #expect(response.status == 502)
        #expect(response.reason == nil)
        #expect(response.apnsID == nil)
        #expect(response.rawBody?.contains("502 Bad Gateway") == true)
    }

    @Test func headersAndTimestampAreRead() {
        let id = UUID()
        let response = PushResponse(
            status: 410,
            headers: [("apns-id", id.uuidString.lowercased()), ("apns-unique-id", "u-1"), ("retry-after", "30")],
            body: Array(#"{"reason":"Unregistered","timestamp":1700000000000}"#.utf8),
            latency: 0.25
        )
        #expect(response.apnsID == id)
        #expect(response.apnsUniqueID == "u-1")
        #expect(response.retryAfter == 30)
        #expect(response.reason == .unregistered)
        #expect(response.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(response.latency == 0.25)
    }

    @Test func everyKnownReasonHasAStatusAnExplanationAndAFix() {
        #expect(APNsReason.allKnown.count == 39)
        for reason in APNsReason.allKnown {
            #expect(reason.isKnown)
            #expect(reason.status != nil, "\(reason)")
            #expect(!reason.explanation.isEmpty && !reason.fix.isEmpty)
            #expect(APNsReason(rawValue: reason.rawValue) == reason)
        }
        #expect(APNsReason.badDeviceToken.explanation.contains("other environment"))
        #expect(
            APNsReason.allKnown.filter(\.isRetryable).map(\.rawValue).sorted()
                == ["InternalServerError", "ServiceUnavailable", "Shutdown", "TooManyRequests"]
        )
    }

    @Test func reasonsRoundTripThroughJSON() throws {
        let response = PushResponse(status: 400, reason: .unknown("Later"))
        let decoded = try JSONDecoder().decode(PushResponse.self, from: JSONEncoder().encode(response))
        #expect(decoded.reason?.rawValue == "Later")
    }
}

@Suite struct PayloadTests {
    @Test func alertIsValidJSONWithEscaping() throws {
        let payload = try Payload.alert(
            title: "Quote \" and \\ backslash",
            body: "Line\nbreak",
            sound: "default",
            badge: 3
        )
        let object = try #require(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        let aps = try #require(object["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Quote \" and \\ backslash")
        #expect(alert["body"] as? String == "Line\nbreak")
        #expect(aps["badge"] as? Int == 3)
    }

    @Test("A payload built from options is JSONSerialization's bytes, whatever its text")
    func builtPayloadsAreJSONSerializationsBytes() throws {
        // Every ASCII character alone, then text with quotes, slashes, controls and more.
        var texts = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        texts += [
            "", "Hello", "Quote \" and \\ backslash", "a/b</script>", "Line\nbreak\r\ttab", "\u{7F}\u{80}\u{9F}",
            "caf\u{E9} \u{1F680} \u{2028}\u{2029} \u{A0}\u{FEFF}", String(repeating: "x", count: 300),
        ]
        func reference(_ aps: [String: Any]) throws -> [UInt8] {
            let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
            return [UInt8](try JSONSerialization.data(withJSONObject: ["aps": aps], options: options))
        }
        for (index, text) in texts.enumerated() {
            let other = texts[(index * 7 + 3) % texts.count]
            #expect(try Payload.alert(body: text) == reference(["alert": ["body": text]]), "\(Array(text.utf8))")
            let full = try Payload.alert(title: other, subtitle: text, body: other, sound: text, badge: index - 60)
            let expected = try reference([
                "alert": ["title": other, "subtitle": text, "body": other], "sound": text, "badge": index - 60,
            ])
            #expect(full == expected, "\(Array(text.utf8))")
        }
        #expect(try Payload.alert(body: "x", badge: Int.min) == reference(["alert": ["body": "x"], "badge": Int.min]))
        #expect(try Payload.background() == reference(["content-available": 1]))
        #expect(String(decoding: try Payload.background(), as: UTF8.self) == #"{"aps":{"content-available":1}}"#)
    }

    @Test func backgroundHasOnlyContentAvailable() throws {
        let payload = try Payload.background(custom: ["sync": "inbox"])
        #expect(String(decoding: payload, as: UTF8.self) == #"{"aps":{"content-available":1},"sync":"inbox"}"#)
        #expect(PushPriority.default(for: .background) == .powerConsiderate)
    }

    @Test func sizeLimitReportsTheActualSize() {
        let big = Array(("{\"a\":\"" + String(repeating: "x", count: 4_200) + "\"}").utf8)
        let error = #expect(throws: PushCoreError.self) { try Payload.validate(big, pushType: .alert) }
        #expect(error?.message.contains("\(big.count) bytes") == true)
        #expect(error?.message.contains("4096") == true)
        #expect(throws: Never.self) { try Payload.validate(big, pushType: .voip) }
    }

    @Test func requestHeadersAreAPNs() throws {
        let id = UUID()
        let notification = PushNotification(
            deviceToken: Fixtures.token,
            topic: "com.example.app",
            pushType: .background,
            priority: .powerConsiderate,
            expiration: Date(timeIntervalSince1970: 0),
            collapseID: "c1",
            apnsID: id,
            payload: try Payload.background()
        )
        let encoded = RequestEncoder(template: notification.template, authority: "api.push.apple.com")
            .headers(for: notification, bearer: nil)
        let headers = Dictionary(encoded.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(encoded.map(\.name).prefix(4) == [":method", ":scheme", ":path", ":authority"], "pseudo-headers first")
        #expect(headers[":method"] == "POST")
        #expect(headers[":path"] == "/3/device/\(Fixtures.token.hex)")
        #expect(headers[":authority"] == "api.push.apple.com")
        #expect(headers["apns-push-type"] == "background")
        #expect(headers["apns-priority"] == "5")
        #expect(headers["apns-expiration"] == "0")
        #expect(headers["apns-collapse-id"] == "c1")
        #expect(headers["apns-id"] == id.uuidString.lowercased())
        #expect(headers["apns-topic"] == "com.example.app")
    }
}
