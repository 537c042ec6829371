import ArgumentParser
import Foundation
import Testing

@testable import apnsctl

/// `send`'s command line as the argument parser reads it: every option and flag it lists is
/// taken on a line that validates, and lines that break a rule of `send` are refused.
@Suite struct SendCommandLineTests {
    static let token = String(repeating: "ab", count: 32)
    static let channel = "dHN0LXNyY2gtY2hubA=="
    static let later = String(Int(Date().timeIntervalSince1970) + 3600)
    /// A store folder that does not exist yet: a new store, which the store option accepts.
    static let store = FileManager.default.temporaryDirectory
        .appendingPathComponent("apnsctl-send-parse-\(UUID().uuidString)").path

    /// Lines that validate: between them, every option and flag of `send`.
    static let plainLines: [[String]] = [
        ["app", "--token", token, "--alert", "Hello", "--title", "Hi", "--sound", "default", "--badge", "3"],
        ["app", "--token", token, "--background", "--priority", "5", "--push-type", "background"],
        [
            "app", "--token", token, "--payload", "payload.json", "--expiration", "30m", "--collapse-id", "c1",
            "--apns-id", "123e4567-e89b-12d3-a456-426614174000", "--topic", "com.example.app", "--environment",
            "production", "--json",
        ],
        [
            "app", "--tokens", "tokens.txt", "--results", "sent.jsonl", "--connections", "4", "--max-attempts", "3",
            "--quiet", "--allow-duplicates", "--alert", "New release",
        ],
        ["app", "--tokens", "tokens.txt", "--resume", "sent.jsonl", "--resend-uncertain", "--alert", "x"],
        ["app", "--tokens", "tokens.txt", "--results", "sent.jsonl", "--no-resend-uncertain", "--alert", "x"],
        [
            "app", "--tokens", "tokens.txt", "--results", "sent.jsonl", "--resend-uncertain", "--payload", "voip.json",
            "--push-type", "voip",
        ],
        ["app", "--tokens", "tokens.txt", "--resume", "sent.jsonl", "--resume-without-journal", "--alert", "x"],
        ["app", "--tokens", "tokens.txt", "--results", "shard-1.jsonl", "--shard", "1/4", "--alert", "x"],
        ["app", "--channel", channel, "--event", "update", "--content-state", "{\"score\":1}"],
        [
            "app", "--token", token, "--event", "start", "--attributes-type", "Match", "--attributes", "{}",
            "--content-state", "{}", "--alert", "Kick-off", "--stale-date", later, "--relevance-score", "50",
            "--input-push-token",
        ],
        [
            "app", "--token", token, "--event", "start", "--attributes-type", "Match", "--attributes", "{}",
            "--content-state", "{}", "--alert", "Kick-off", "--input-push-channel", channel,
        ],
        ["app", "--token", token, "--event", "end", "--content-state", "{}", "--dismissal-date", later],
        [
            "app", "--token", token, "--alert", "x", "--port", "2197", "--gateway", "127.0.0.1:2197", "--ca", "a.pem",
            "--ca", "b.pem", "--ca-bundle", "bundle.pem", "-4", "--resolve", "api.push.apple.com:443:127.0.0.1",
            "--resolve", "api.sandbox.push.apple.com:443:127.0.0.2", "--proxy", "http://proxy.example.com:3128",
            "--timeout", "2.5",
        ],
        ["app", "--token", token, "--alert", "x", "--ipv6"],
        ["app", "--token", token, "--alert", "x", "-6"],
        ["app", "--token", token, "--alert", "x", "--ipv4"],
        [
            "app.p12", "--token", token, "--alert", "x", "--password-env", "P12_PASSWORD", "--team-id", "TEAM123456",
            "--key-id", "ABC123DEFG",
        ],
        ["app", "--token", token, "--alert", "x", "--password-file", "password.txt"],
        ["app", "--token", token, "--alert", "x", "--password-stdin"],
        ["app", "--token", token, "--alert", "x", "--store", store, "--identity", "identity.txt"],
        ["--token=\(token)", "--alert=Hello, world", "app", "--gateway=127.0.0.1:2197", "--ca=gw/ca.pem"],
    ]

    /// Lines the argument parser refuses, each for one rule of `send`.
    static let refusedLines: [[String]] = [
        ["app", "--token", token],
        ["app", "--token", token, "--alert", "x", "--background"],
        ["app", "--token", token, "--alert", "x", "--priority", "7"],
        ["app", "--token", token, "--alert", "x", "--priority", "high"],
        ["app", "--token", token, "--alert", "x", "--badge", "many"],
        ["app", "--token", token, "--alert", "x", "--environment", "staging"],
        ["app", "--token", token, "--alert", "x", "--port", "0"],
        ["app", "--token", token, "--alert", "x", "--timeout", "0"],
        ["app", "--token", token, "--alert", "x", "-4", "-6"],
        ["app", "--token", token, "--alert", "x", "--proxy", "not a url"],
        ["app", "--token", token, "--alert", "x", "--resolve", "nonsense"],
        ["app", "--token", token, "--alert", "x", "--password-env", "A", "--password-file", "f"],
        ["app", "--token", token, "--alert", "x", "--apns-id", "not-a-uuid"],
        ["app", "--token", token, "--alert", "x", "--expiration", "yesterday"],
        ["app", "--token", token, "--alert", "x", "--results", "r.jsonl"],
        ["app", "--token", token, "--alert", "x", "--no-resend-uncertain"],
        ["app", "--token", token, "--alert", "x", "--resend-uncertain"],
        ["app", "--tokens", "t.txt", "--results", "r", "--alert", "x", "--resend-uncertain", "--no-resend-uncertain"],
        ["app", "--tokens", "t.txt", "--alert", "x"],
        ["app", "--tokens", "t.txt", "--results", "r", "--alert", "x", "--connections", "17"],
        ["app", "--tokens", "t.txt", "--results", "r", "--alert", "x", "--shard", "4/4"],
        ["app", "--tokens", "t.txt", "--results", "r", "--alert", "x", "--shard", "1of4"],
        ["app", "--tokens", "t.txt", "--results", "r", "--alert", "x", "--shard", "0/0"],
        ["app", "--token", token, "--alert", "x", "--shard", "0/2"],
        ["app", "--token", token, "--channel", channel, "--alert", "x"],
        ["app", "--channel", "not base64!", "--event", "update", "--content-state", "{}"],
        ["app", "--token", token, "--event", "update"],
        ["app", "--token", token, "--event", "middle", "--content-state", "{}"],
        ["app", "--token", token, "--content-state", "{}", "--alert", "x"],
        ["app", "--token", token, "--event", "end", "--content-state", "{}", "--relevance-score", "nan"],
        ["AuthKey_ABC123DEFG.p8", "--token", token, "--alert", "x"],
        ["app", "--token", token, "--alert", "x", "--topic", "com.example.<bundle>"],
        ["app", "--token", token, "--alert", "x", "--store", "vault:", "--identity", "id.txt"],
    ]

    /// `send`'s options and flags by long name, from the argument parser's own description of
    /// the command (`_dumpHelp`), help aside.
    static func optionNames() throws -> Set<String> {
        let dump = try #require(try JSONSerialization.jsonObject(with: Data(Send._dumpHelp().utf8)) as? [String: Any])
        let command = try #require(dump["command"] as? [String: Any])
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        var names = Set<String>()
        for argument in arguments where argument["kind"] as? String != "positional" {
            let long = (argument["names"] as? [[String: Any]])?.first { $0["kind"] as? String == "long" }
            let name = try #require(long?["name"] as? String, "an option without a long name")
            if name != "help" { names.insert(name) }
        }
        return names
    }

    @Test("Every option and flag of send is taken on a line that validates")
    func validLinesParse() throws {
        var used = Set<String>()
        for line in Self.plainLines {
            #expect(throws: Never.self, "\(line)") { try Send.parse(line) }
            for argument in line where argument.hasPrefix("-") {
                let name = argument.drop { $0 == "-" }.split(separator: "=").first.map(String.init) ?? ""
                used.insert(["4": "ipv4", "6": "ipv6"][name] ?? name)
            }
        }
        let options = try Self.optionNames()
        #expect(options.count > 40, "the argument parser's list of send's options was read")
        #expect(options.subtracting(used).isEmpty, "options no line gives: \(options.subtracting(used).sorted())")
    }

    @Test("A line that breaks a rule of send is refused")
    func refusedLinesAreRefused() throws {
        for line in Self.refusedLines {
            #expect(throws: (any Error).self, "\(line)") { try Send.parse(line) }
        }
    }
}
