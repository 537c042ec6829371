import ArgumentParser
import Foundation
import PushBulk
import PushCore
import Testing

@testable import apnsctl

/// A bulk run's options as its header records them and as the printed resume command gives them
/// back, both derived from `send`'s own declarations: the resume command parses to the same
/// options, and every option of `send` is either recorded or said not to be.
@Suite struct SendRunOptionsTests {
    static let later = Int(Date().timeIntervalSince1970) + 3600
    static let channel = "dHN0LXNyY2gtY2hubA=="
    static let store = FileManager.default.temporaryDirectory
        .appendingPathComponent("apnsctl-send-record-\(UUID().uuidString)").path

    /// Bulk lines that validate: between them, every option of `send` that goes with --tokens.
    static let bulkLines: [[String]] = [
        [
            "app", "--tokens", "my tokens/it's $(x).txt", "--results", "sent.jsonl", "--alert=-50% today: \"it's\" ✓",
            "--title", "Hi", "--sound", "default", "--badge", "3", "--priority", "5", "--expiration", String(later),
            "--collapse-id", "c1", "--topic", "com.example.app", "--push-type", "alert", "--environment", "sandbox",
            "--password-env", "P12_PASSWORD", "--connections", "4", "--max-attempts", "3", "--allow-duplicates",
            "--quiet",
        ],
        [
            "--tokens", "tokens.txt", "--resume", "sent.jsonl", "--resend-uncertain", "--background",
            "--push-type", "background", "--priority", "5", "--store", store, "--identity", "identity.txt", "--ca",
            "a.pem", "--ca", "b.pem", "--ca-bundle", "bundle.pem", "-4", "--resolve",
            "api.push.apple.com:443:127.0.0.1",
            "--proxy", "http://ops:hunter2@proxy.example.com:3128", "--timeout", "2.5", "--gateway", "127.0.0.1:2197",
            "--port", "2197", "--password-file", "password.txt", "--json", "--", "-odd name.p12",
        ],
        [
            "AuthKey_ABC123DEFG.p8", "--tokens", "-", "--results", "sent.jsonl", "--payload", "payload.json", "--topic",
            "com.example.app", "--team-id", "TEAM123456", "--key-id", "ABC123DEFG", "--ipv6",
            "--resume-without-journal", "--resume", "sent.jsonl",
        ],
        ["app", "--tokens", "t.txt", "--results", "r.jsonl", "--payload", "-", "--ipv4", "--no-resend-uncertain"],
        ["app", "--tokens", "t.txt", "--results", "r.jsonl", "--alert", "x", "--password-stdin"],
        [
            "app", "--tokens", "t.txt", "--results", "r.jsonl", "--event", "start", "--attributes-type", "Match",
            "--attributes", "{}", "--content-state", "{}", "--alert", "Kick-off", "--stale-date", String(later),
            "--relevance-score", "50", "--input-push-token",
        ],
        [
            "app", "--tokens", "t.txt", "--results", "r.jsonl", "--event", "start", "--attributes-type", "Match",
            "--attributes", "{}", "--content-state", "{}", "--alert", "Kick-off", "--input-push-channel", channel,
        ],
        [
            "app", "--tokens", "t.txt", "--results", "r.jsonl", "--event", "end", "--content-state", "{}",
            "--dismissal-date", String(later),
        ],
    ]

    /// The header a run of `send` writes: its notification values and its recorded options, with
    /// the token input and connections the bulk library records itself.
    static func header(_ send: Send) -> BulkRunHeader {
        var parameters = send.recordedParameters(environment: .sandbox)
        parameters.tokens = send.tokens
        parameters.connections = send.connections
        let template = NotificationTemplate(
            topic: send.topic,
            pushType: NotificationRequest.pushType(of: send.requestShape),
            priority: send.priority.map(PushPriority.init),
            expiration: send.expiration.flatMap(Double.init).map(Date.init(timeIntervalSince1970:)),
            collapseID: send.collapseID,
            payload: Array(#"{"aps":{"alert":"x"}}"#.utf8)
        )
        return BulkRunHeader(
            credential: "sha256:aa",
            template: template,
            gateway: "127.0.0.1:2197",
            parameters: parameters
        )
    }

    @Test("The printed resume command parses back to the options the run was given")
    func resumeCommandParsesBack() throws {
        for line in Self.bulkLines {
            let sent = try Send.parse(line)
            let header = Self.header(sent)
            // Through the results file's first line, as a resume reads it.
            let read = try #require(BulkRunHeader.parse(Array(header.jsonLine.utf8)))
            let continuation = try #require(
                read.continuation(resultsPath: "sent.jsonl", source: .file("t.txt"), credentialStopped: false)
            )
            let words = Send.resumeArguments(continuation)
            #expect(words.first == "send")
            let resumed = try Send.parse(Array(words.dropFirst()))
            #expect(resumed.resume == "sent.jsonl", "\(words)")
            let (then, now) = (
                sent.recordedParameters(environment: .sandbox), resumed.recordedParameters(environment: .sandbox)
            )
            #expect(now.options == then.options && now.standardInput == then.standardInput, "\(words)")
            #expect(resumed.credential.hasSuffix(sent.credential) && resumed.tokens == sent.tokens, "\(words)")
            #expect(resumed.connections == sent.connections, "\(words)")
            #expect(resumed.topic == sent.topic && resumed.collapseID == sent.collapseID, "\(words)")
            #expect(resumed.requestShape.pushType == NotificationRequest.pushType(of: sent.requestShape), "\(words)")
            #expect(resumed.priority == sent.priority, "\(words)")
            #expect(resumed.expiration == sent.expiration, "\(words)")
            #expect(resumed.environment == .sandbox, "the environment the run used: \(words)")
        }
    }

    @Test("Every option of send is recorded for a resume, or said not to be")
    func everyOptionIsRecordedOrExcluded() throws {
        var recorded = Set<String>()
        for line in Self.bulkLines {
            let sent = try Send.parse(line)
            #expect(
                Send.values(of: sent).count == Send.declaredArguments.count - 1,
                "each declared argument (help aside) has its parsed value, in the same order"
            )
            recorded.formUnion(sent.recordedParameters(environment: .sandbox).options.keys)
        }
        let options = try SendCommandLineTests.optionNames()
        let described = recorded.union(Send.recording.keys)
        #expect(
            options.subtracting(described).isEmpty,
            "neither recorded nor excluded: \(options.subtracting(described))"
        )
        #expect(recorded.isDisjoint(with: ["token", "resume", "results", "topic", "expiration"]))
    }

    @Test("No secret is recorded, and standard input is said")
    func noSecretAndStandardInput() throws {
        let proxied = try Send.parse(Self.bulkLines[1]).recordedParameters(environment: .production)
        #expect(proxied.options["proxy"] == ["http://ops@proxy.example.com:3128"])
        #expect(proxied.options["timeout"] == ["2.5"] && proxied.options["ca"] == ["a.pem", "b.pem"])
        #expect(proxied.options["environment"] == ["production"])
        #expect(!Self.header(try Send.parse(Self.bulkLines[1])).jsonLine.contains("hunter2"))
        let defaults = try Send.parse(Self.bulkLines[3]).recordedParameters(environment: .sandbox)
        #expect(defaults.options["timeout"] == nil && defaults.options["connections"] == nil, "a default is left out")
        #expect(defaults.standardInput == .payload)
        #expect(try Send.parse(Self.bulkLines[2]).recordedParameters(environment: .sandbox).standardInput == .tokens)
        #expect(try Send.parse(Self.bulkLines[0]).recordedParameters(environment: .sandbox).standardInput == nil)
    }
}
