import Foundation
import TestSupport
import Testing

/// What a gateway started with the fixture token key, and a store holding that key for
/// com.example.app, need: every push type's topic is derived from the stored key's bundle ID.
final class TokenKeySetup: @unchecked Sendable {
    static let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
    let folder: TemporaryFolder
    let gateway: GatewayProcess
    var store: String { folder.path("store") }
    let alias = "token-ABC123DEFG"

    /// `gatewayArguments`: more options for `gateway serve` (key restrictions, say).
    init(importKey: Bool = true, gatewayArguments: [String] = []) throws {
        folder = try TemporaryFolder()
        gateway = try GatewayProcess(
            folder,
            name: "gateway",
            arguments: [
                "--environment", "sandbox", "--token-key",
                "ABC123DEFG=\(CLI.cert("keys/AuthKey_ABC123DEFG.pub.pem"))", "--team-id", "ABCDE12345",
            ] + gatewayArguments
        )
        if importKey {
            let imported = try CLI.run([
                "import", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic",
                "com.example.app", "--environment", "both", "--store", store,
            ])
            guard imported.status == 0 else { throw CLIError(message: "import failed: \(imported.stderr)") }
        }
    }

    /// `apnsctl ARGUMENTS --store … --gateway … --ca … --environment sandbox`.
    func run(_ arguments: [String], stdin: String? = nil) throws -> CLI.Result {
        try CLI.run(
            arguments + ["--store", store, "--environment", "sandbox"] + gateway.connection,
            stdin: stdin
        )
    }

    /// `apnsctl send` with the stored key to the fixture device token, then `arguments`.
    func send(_ arguments: [String]) throws -> CLI.Result {
        try run(["send", alias, "--token", Self.token] + arguments)
    }

    /// The same with the .p8 file instead of the stored key.
    func runWithKeyFile(_ arguments: [String]) throws -> CLI.Result {
        try CLI.run(
            arguments + ["--team-id", "ABCDE12345", "--environment", "sandbox"] + gateway.connection
        )
    }

    var keyFile: String { CLI.cert("keys/AuthKey_ABC123DEFG.p8") }

    func file(_ name: String, _ contents: String) throws -> String {
        let path = folder.path(name)
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// Every push type of the reference, sent through the real binary to the real local gateway,
/// checked in the gateway's delivery record: topic, push type and priority as they arrived.
@Suite(.needsSecretService)
struct PushTypeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var type: String
        var topic: String
        var arguments = ["--payload", "{}"]
        var priority: String?
        var testDescription: String { type }
    }

    static let cases: [Case] = [
        Case(type: "alert", topic: "com.example.app", arguments: ["--alert", "Hi"], priority: "10"),
        Case(type: "background", topic: "com.example.app", arguments: ["--background"], priority: "5"),
        Case(type: "voip", topic: "com.example.app.voip", priority: "10"),
        Case(type: "complication", topic: "com.example.app.complication", priority: "5"),
        Case(type: "fileprovider", topic: "com.example.app.pushkit.fileprovider", priority: "5"),
        Case(type: "location", topic: "com.example.app.location-query", priority: "10"),
        Case(
            type: "liveactivity",
            topic: "com.example.app.push-type.liveactivity",
            arguments: ["--event", "update", "--content-state", "{\"eta\":3}"],
            priority: "5"
        ),
        Case(type: "pushtotalk", topic: "com.example.app.voip-ptt", priority: "10"),
        Case(type: "widgets", topic: "com.example.app.push-type.widgets", priority: "1"),
        Case(type: "controls", topic: "com.example.app.push-type.controls", priority: "1"),
        Case(
            type: "mdm",
            topic: "com.apple.mgmt.External.2f5a8c1e-0d4b-4f7e-9a63-1c2b3d4e5f60",
            arguments: ["--payload", "{}", "--topic", "com.apple.mgmt.External.2f5a8c1e-0d4b-4f7e-9a63-1c2b3d4e5f60"],
            priority: nil
        ),
    ]

    /// Each push type's payload file: `{}` in the table stands for the type's own.
    static func payload(for type: String) -> String {
        switch type {
        case "widgets", "controls": "{\"aps\":{\"content-changed\":true}}"
        case "mdm": "{\"mdm\":\"8b2c4e6f-1a3d-4c5e-9f70-2b4d6f8a0c1e\"}"
        default: "{\"aps\":{},\"kind\":\"\(type)\"}"
        }
    }

    @Test func theReferenceListIsCovered() {
        #expect(
            Set(Self.cases.map(\.type))
                == [
                    "alert", "background", "voip", "complication", "fileprovider", "location", "liveactivity",
                    "pushtotalk", "widgets", "controls", "mdm",
                ]
        )
    }

    @Test(arguments: cases)
    func topicAndHeadersOnTheWire(_ test: Case) throws {
        let setup = try TokenKeySetup()
        var arguments = test.arguments
        if let index = arguments.firstIndex(of: "{}") {
            arguments[index] = try setup.file("payload.json", Self.payload(for: test.type))
        }
        if let priority = test.priority { arguments += ["--priority", priority] }
        let sent = try setup.send(["--push-type", test.type, "--json"] + arguments).succeeded()
        // A derived topic is the app's own: no warning that the key was imported for another.
        // (An MDM push goes to the enrolment's push magic topic, which is not the app's.)
        if test.type != "mdm" { #expect(!sent.stderr.contains("warning"), "\(sent.stderr)") }
        let report = try sent.json()
        #expect(report["topic"] as? String == test.topic)

        let record = try #require(try setup.gateway.deliveries().last)
        #expect(record["topic"] as? String == test.topic)
        let headers = try #require(record["headers"] as? [String: String])
        #expect(headers["apns-topic"] == test.topic)
        #expect(headers["apns-push-type"] == test.type)
        #expect(headers["apns-priority"] == test.priority)
        #expect(record["device_token"] as? String == TokenKeySetup.token)
        if test.type == "widgets" || test.type == "controls" {
            // The record shows the payload as it came: true, not 1.
            let log = try String(contentsOfFile: setup.gateway.logFile, encoding: .utf8)
            #expect(log.contains("\"content-changed\":true"), "\(log)")
        }
    }

    /// The rules the reference gives for priorities: 1 is accepted, a background push takes only 5.
    @Test func priorityRules() throws {
        let setup = try TokenKeySetup()
        try setup.send(["--background", "--priority", "10"]).exited(64, stderr: "priority 5")
        try setup.send(["--alert", "x", "--priority", "1"]).succeeded()
        #expect((try setup.gateway.deliveries().last?["headers"] as? [String: String])?["apns-priority"] == "1")
        try setup.send(["--payload", "-", "--push-type", "telepathy"]).exited(64, stderr: "controls")
    }

    /// `--push-type` completes a bare bundle ID given with `--topic`, and keeps a topic that
    /// already carries the suffix, for the stored key and for the .p8 file alike.
    @Test func aBareTopicGetsThePushTypesSuffix() throws {
        let setup = try TokenKeySetup()
        let payload = try setup.file("controls.json", Self.payload(for: "controls"))
        for topic in ["com.example.app", "com.example.app.push-type.controls"] {
            try setup.send(["--push-type", "controls", "--payload", payload, "--priority", "1", "--topic", topic])
                .succeeded()
            #expect(try setup.gateway.deliveries().last?["topic"] as? String == "com.example.app.push-type.controls")
            try setup.runWithKeyFile([
                "send", setup.keyFile, "--token", TokenKeySetup.token, "--push-type", "controls", "--payload",
                payload, "--priority", "1", "--topic", topic,
            ]).succeeded()
            #expect(try setup.gateway.deliveries().last?["topic"] as? String == "com.example.app.push-type.controls")
        }
        #expect(try setup.gateway.deliveries().count == 4)
    }

    /// A topic of another app still gets its warning: only derived topics are the key's own.
    @Test func anotherAppsTopicIsStillWarnedAbout() throws {
        let setup = try TokenKeySetup()
        let other = try setup.send(["--alert", "x", "--topic", "com.example.other"])
        #expect(other.stderr.contains("warning"))
        #expect(other.stderr.contains("com.example.other"))
    }
}
