import Foundation
import TestSupport
import Testing

/// Broadcast channels and broadcasts through the real binary and the local gateway, and
/// `--expiration` in every form it takes.
struct BroadcastTests {
    static func json(_ result: CLI.Result) throws -> [String: Any] { try GatewayCommandTests.json(result) }

    @Test func broadcastThroughAChannelCreatedListedAndDeleted() throws {
        let setup = try TokenKeySetup(importKey: false)
        let app = ["com.example.app"]
        let created = try setup.runWithKeyFile(
            ["channels", "create", setup.keyFile] + app + ["--message-storage-policy", "1", "--json"]
        )
        #expect(created.status == 0, "\(created.stderr)")
        let createReport = try Self.json(created)
        #expect(createReport["status"] as? Int == 201)
        #expect(createReport["credential"] as? String == setup.keyFile)
        #expect(createReport["bundle_id"] as? String == "com.example.app")
        let requestID = try #require(createReport["request_id"] as? String)
        #expect(requestID == requestID.lowercased() && UUID(uuidString: requestID) != nil)
        let channel = try #require((createReport["channel"] as? [String: Any])?["id"] as? String)
        #expect(Data(base64Encoded: channel) != nil)

        // A second channel, so the list shows more than one.
        let other = try setup.runWithKeyFile(["channels", "create", setup.keyFile] + app + ["--json"])
        let otherID = try #require((try Self.json(other)["channel"] as? [String: Any])?["id"] as? String)

        let listed = try setup.runWithKeyFile(["channels", "list", setup.keyFile] + app + ["--json"])
        #expect(listed.status == 0)
        #expect(Set(try Self.json(listed)["channels"] as? [String] ?? []) == [channel, otherID])
        let human = try setup.runWithKeyFile(["channels", "list", setup.keyFile] + app)
        #expect(human.stdout.contains("has 2 channels") && human.stdout.contains(channel))

        let shown = try setup.runWithKeyFile(
            ["channels", "show", setup.keyFile] + app + ["--channel", channel, "--json"]
        )
        let shownChannel = try #require(try Self.json(shown)["channel"] as? [String: Any])
        #expect(shownChannel["message_storage_policy"] as? Int == 1)
        #expect(shownChannel["push_type"] as? String == "LiveActivity")

        let sent = try setup.runWithKeyFile([
            "send", setup.keyFile, "--topic", "com.example.app", "--channel", channel, "--event", "update",
            "--content-state", "{\"score\":\"2-1\"}", "--priority", "5", "--expiration", "1h", "--json",
        ])
        #expect(sent.status == 0, "\(sent.stdout)\(sent.stderr)")
        let sendReport = try Self.json(sent)
        #expect(sendReport["accepted"] as? Bool == true)
        #expect(sendReport["channel_id"] as? String == channel)
        let record = try #require(try setup.gateway.deliveries().last)
        #expect(record["kind"] as? String == "broadcast")
        #expect(record["channel_id"] as? String == channel)
        #expect(record["bundle_id"] as? String == "com.example.app")
        #expect(record["apns_request_id"] as? String == sendReport["request_id"] as? String)
        let headers = try #require(record["headers"] as? [String: String])
        #expect(headers["apns-channel-id"] == channel)
        #expect(headers["apns-push-type"] == "liveactivity")
        #expect(headers["apns-priority"] == "5")
        #expect(headers["apns-topic"] == nil)
        let aps = try #require((record["payload"] as? [String: Any])?["aps"] as? [String: Any])
        #expect((aps["content-state"] as? [String: Any])?["score"] as? String == "2-1")

        let deleted = try setup.runWithKeyFile(["channels", "delete", setup.keyFile] + app + ["--channel", channel])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout.contains("204 deleted channel \(channel)"))
        let after = try setup.runWithKeyFile(["channels", "list", setup.keyFile] + app + ["--json"])
        #expect(try Self.json(after)["channels"] as? [String] == [otherID])

        // The deleted channel is gone: reading it or broadcasting to it is refused with APNs' reason.
        let missing = try setup.runWithKeyFile(
            ["channels", "show", setup.keyFile] + app + ["--channel", channel, "--json"]
        )
        #expect(missing.status == 1)
        // A rejection as every report gives one: the reason, its explanation and its fix.
        let rejection = try Self.json(missing)
        #expect(rejection["reason"] as? String == "ChannelNotRegistered")
        #expect(rejection["explanation"] as? String != nil && rejection["fix"] as? String != nil)
        #expect(rejection["error"] == nil)
        let refused = try setup.runWithKeyFile([
            "send", setup.keyFile, "--topic", "com.example.app", "--channel", channel, "--event", "end",
        ])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("ChannelNotRegistered"))
        #expect(try setup.gateway.deliveries().count == 1)
    }

    /// A key Apple restricted to one app or one environment manages and broadcasts to that app's
    /// channels only, as it pushes to that app only.
    @Test func restrictedKeysServeOnlyTheirOwnChannels() throws {
        let setup = try TokenKeySetup(
            importKey: false,
            gatewayArguments: ["--key-topic", "ABC123DEFG=com.example.app"]
        )
        let own = try setup.runWithKeyFile(["channels", "create", setup.keyFile, "com.example.app", "--json"])
        #expect(own.status == 0, "\(own.stdout)\(own.stderr)")
        let other = try setup.runWithKeyFile(["channels", "create", setup.keyFile, "com.other.app", "--json"])
        #expect(other.status == 1, "\(other.stdout)\(other.stderr)")
        #expect(try Self.json(other)["reason"] as? String == "UnrelatedKeyIdInToken")

        let production = try TokenKeySetup(
            importKey: false,
            gatewayArguments: ["--key-environment", "ABC123DEFG=production"]
        )
        let refused = try production.runWithKeyFile([
            "channels", "list", production.keyFile, "com.example.app", "--json",
        ])
        #expect(refused.status == 1, "\(refused.stdout)\(refused.stderr)")
        #expect(try Self.json(refused)["reason"] as? String == "BadEnvironmentKeyInToken")
    }

    @Test func channelRequestsGetUsageErrors() throws {
        let setup = try TokenKeySetup(importKey: false)
        let cases: [(arguments: [String], says: String)] = [
            (["channels", "show", setup.keyFile, "com.example.app", "--channel", "not base64!"], "base64"),
            (["channels", "create", setup.keyFile, "com.example.app/../x"], "not a bundle ID"),
            (["channels", "create", setup.keyFile, "com.example.app", "--message-storage-policy", "2"], "0|1"),
            (
                ["send", setup.keyFile, "--channel", "dHN0", "--alert", "x", "--topic", "com.example.app"],
                "--event"
            ),
            (
                [
                    "send", setup.keyFile, "--channel", "dHN0", "--event", "end", "--collapse-id", "x", "--topic",
                    "com.example.app",
                ],
                "--collapse-id"
            ),
        ]
        for test in cases {
            let result = try setup.runWithKeyFile(test.arguments)
            #expect(result.status == 64, "\(test.arguments): \(result.stderr)")
            #expect(result.stderr.contains(test.says), "\(test.arguments): \(result.stderr)")
        }
    }

    @Test func expirationFormats() throws {
        let setup = try TokenKeySetup(importKey: false)
        func expiration(_ value: String) throws -> (CLI.Result, String?) {
            let result = try setup.runWithKeyFile([
                "send", setup.keyFile, "--token", TokenKeySetup.token, "--topic", "com.example.app", "--alert", "x",
                "--expiration", value,
            ])
            let header =
                result.status == 0
                ? (try setup.gateway.deliveries().last?["headers"] as? [String: String])?["apns-expiration"] : nil
            return (result, header)
        }
        let formatter = ISO8601DateFormatter()
        for (value, offset) in [("30m", 1_800), ("1h", 3_600), ("2d", 172_800), ("45s", 45)] {
            let before = Int(Date().timeIntervalSince1970)
            let (result, header) = try expiration(value)
            let after = Int(Date().timeIntervalSince1970)
            #expect(result.status == 0, "\(value): \(result.stderr)")
            let seconds = try #require(header.flatMap { Int($0) }, "\(value)")
            #expect((before + offset...after + offset).contains(seconds), "\(value) gave \(seconds)")
        }
        let future = Int(Date().timeIntervalSince1970) + 7_200
        let rfc3339 = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(future)))
        #expect(try expiration(rfc3339).1 == String(future))
        let offsetForm = rfc3339.replacingOccurrences(of: "Z", with: "+00:00")
        #expect(try expiration(offsetForm).1 == String(future))
        #expect(try expiration(String(future + 5)).1 == String(future + 5))
        #expect(try expiration("0").1 == "0")

        for past in ["2020-01-01T00:00:00Z", "1", String(Int(Date().timeIntervalSince1970) - 60)] {
            let (result, _) = try expiration(past)
            #expect(result.status == 64, "\(past)")
            #expect(result.stderr.contains("in the past"), "\(past): \(result.stderr)")
            #expect(result.stderr.contains("0 to have APNs try once"))
        }
        for nonsense in ["soon", "5 minutes", "30x", "2030-13-01T00:00:00Z", "99999999999"] {
            let (result, _) = try expiration(nonsense)
            #expect(result.status == 64, "\(nonsense)")
            #expect(result.stderr.contains("is not a time"), "\(nonsense): \(result.stderr)")
        }
        // Only the accepted ones reached the gateway.
        #expect(try setup.gateway.deliveries().count == 8)
    }
}

/// A client nobody here wrote: curl, with a client certificate, creates a channel on the local
/// gateway and broadcasts to it; apnsctl then sees the channel curl made.
struct BroadcastInteropTests {
    @Test func curlCreatesAChannelAndBroadcasts() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let pem = try pki.pem("sandbox")
        let base = "https://localhost:\(gateway.port)"
        let requestID = UUID().uuidString.lowercased()
        let create = try GatewayCommandTests.curl(
            pem,
            gateway,
            [
                "-H", "apns-request-id: \(requestID)",
                "--data", "{\"message-storage-policy\":1,\"push-type\":\"LiveActivity\"}",
                "\(base)/1/apps/com.example.app/channels",
            ]
        )
        #expect(create.status == 0, "\(create.stderr)")
        #expect(create.stdout.hasPrefix("HTTP/2 201"), "\(create.stdout)")
        let headers = create.stdout.split(separator: "\r\n").map { $0.lowercased() }
        #expect(headers.contains("apns-request-id: \(requestID)"))
        let channelLine = try #require(
            create.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("apns-channel-id:") }
        )
        let channel = channelLine.dropFirst("apns-channel-id:".count).trimmingCharacters(in: .whitespaces)
        #expect(Data(base64Encoded: channel) != nil)

        let listed = try pki.run(
            ["channels", "list", pki.identity("sandbox"), "com.example.app", "--json"] + gateway.connection
        )
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try GatewayCommandTests.json(listed)["channels"] as? [String] == [channel])

        let timestamp = Int(Date().timeIntervalSince1970)
        let broadcast = try GatewayCommandTests.curl(
            pem,
            gateway,
            [
                "-H", "apns-channel-id: \(channel)", "-H", "apns-push-type: liveactivity", "-H", "apns-priority: 10",
                "--data",
                "{\"aps\":{\"event\":\"update\",\"timestamp\":\(timestamp),\"content-state\":{\"lap\":12}}}",
                "\(base)/4/broadcasts/apps/com.example.app",
            ]
        )
        #expect(broadcast.stdout.hasPrefix("HTTP/2 200"), "\(broadcast.stdout)\(broadcast.stderr)")
        // A broadcast without its channel gets APNs' reason, in APNs' JSON body.
        let missing = try GatewayCommandTests.curl(
            pem,
            gateway,
            [
                "-H", "apns-push-type: liveactivity", "--data", "{\"aps\":{}}",
                "\(base)/4/broadcasts/apps/com.example.app",
            ]
        )
        #expect(missing.stdout.hasPrefix("HTTP/2 400"))
        #expect(missing.stdout.contains("{\"reason\":\"MissingChannelId\"}"))

        let records = try gateway.deliveries()
        #expect(records.count == 1)
        #expect(records.first?["kind"] as? String == "broadcast")
        #expect(records.first?["channel_id"] as? String == channel)
        #expect(records.first?["auth"] as? String == "certificate")
        let aps = (records.first?["payload"] as? [String: Any])?["aps"] as? [String: Any]
        #expect((aps?["content-state"] as? [String: Any])?["lap"] as? Int == 12)
    }
}
