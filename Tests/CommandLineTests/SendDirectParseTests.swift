import ArgumentParser
import Foundation
import Testing

@testable import apnsctl

/// `send`'s direct reader (`Send.parseDirectly`) against swift-argument-parser: it must know
/// every option the argument parser knows, build the same command from every line it takes, and
/// take no line the argument parser refuses.
@Suite struct SendDirectParseTests {
    static let token = String(repeating: "ab", count: 32)
    static let channel = "dHN0LXNyY2gtY2hubA=="
    static let later = String(Int(Date().timeIntervalSince1970) + 3600)
    /// A store folder that does not exist yet: a new store, which the store option accepts.
    static let store = FileManager.default.temporaryDirectory
        .appendingPathComponent("apnsctl-direct-parse-\(UUID().uuidString)").path

    /// Lines in the plain forms that validate: between them, every option and flag of `send`.
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
        ["app", "--tokens", "tokens.txt", "--resume", "sent.jsonl", "--resume-without-journal", "--alert", "x"],
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

    /// Lines the direct reader leaves to the argument parser before validating anything.
    static let unusualLines: [[String]] = [
        ["app", "--token", token, "--alert", "x", "--alert", "y"],
        ["app", "--token", token, "--alert", "-x"],
        ["app", "--token", token, "--alert", ""],
        ["app", "--token", token, "--alert="],
        ["app", "--token", token, "--payload", "-"],
        ["app", "--token", token, "--alert", "x", "--unknown", "y"],
        ["app", "--token", token, "--alert", "x", "--json=yes"],
        ["app", "--token", token, "--alert", "x", "-46"],
        ["app", "--token", token, "--alert", "x", "-h"],
        ["app", "--token", token, "--alert", "x", "--help"],
        ["app", "--token", token, "--alert", "x", "--", "more"],
        ["app", "other", "--token", token, "--alert", "x"],
        ["--token", token, "--alert", "x"],
        ["app", "--token", token, "--alert"],
        ["app", "--token", token, "--alert", "x", "--json", "--json"],
        ["app", "--token", token, "--alert", "x", "-4", "--ipv4"],
    ]

    /// Plain lines the argument parser refuses: the direct reader must refuse them too.
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
        ["app", "--tokens", "t.txt", "--alert", "x"],
        ["app", "--tokens", "t.txt", "--results", "r", "--alert", "x", "--connections", "17"],
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

    @Test("The direct reader's tables are the argument parser's options of send, no more and no fewer")
    func tablesMatchTheArgumentParser() throws {
        let dump = try #require(try JSONSerialization.jsonObject(with: Data(Send._dumpHelp().utf8)) as? [String: Any])
        let command = try #require(dump["command"] as? [String: Any])
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        var options = Set<String>()
        var flags = Set<String>()
        var repeatable = Set<String>()
        var shorts = Set<String>()
        var positionals = 0
        for argument in arguments {
            let kind = argument["kind"] as? String
            let names = (argument["names"] as? [[String: Any]]) ?? []
            let long = names.first { $0["kind"] as? String == "long" }?["name"] as? String
            for name in names where name["kind"] as? String == "short" { shorts.insert(name["name"] as? String ?? "") }
            switch kind {
            case "positional": positionals += 1
            case "option":
                let name = try #require(long)
                options.insert(name)
                if argument["isRepeating"] as? Bool == true { repeatable.insert(name) }
            case "flag":
                let name = try #require(long)
                if name != "help" { flags.insert(name) }
            default: Issue.record("an argument of kind \(kind ?? "none")")
            }
        }
        #expect(positionals == 1)
        #expect(options == Send.directValueOptions)
        #expect(flags == Send.directFlags)
        #expect(repeatable == Send.directRepeatableOptions)
        #expect(shorts == ["4", "6", "h"])
    }

    @Test("Every plain line is read directly, as the argument parser reads it")
    func plainLinesReadAlike() throws {
        var used = Set<String>()
        for line in Self.plainLines {
            let parsed = try Send.parse(line)
            let direct = try #require(try Send.parseDirectly(line), "not read directly: \(line)")
            #expect(Self.values(of: direct) == Self.values(of: parsed), "\(line)")
            for argument in line where argument.hasPrefix("-") {
                let name = argument.drop { $0 == "-" }.split(separator: "=").first.map(String.init) ?? ""
                used.insert(["4": "ipv4", "6": "ipv6"][name] ?? name)
            }
        }
        // Every option and flag was given a value on some line and compared.
        #expect(Send.directValueOptions.union(Send.directFlags).subtracting(used).isEmpty)
        // The comparison sees every property: a property left unset would show as such.
        let values = Self.values(of: try #require(try Send.parseDirectly(Self.plainLines[0])))
        #expect(values.count == Send.directValueOptions.count + Send.directFlags.count + 1)
        #expect(!values.contains { $0.hasSuffix("not set") })
    }

    @Test("Lines outside the plain forms are left to the argument parser")
    func unusualLinesAreLeft() throws {
        for line in Self.unusualLines {
            #expect(try Send.parseDirectly(line) == nil, "\(line)")
        }
    }

    @Test("A line the argument parser refuses is refused by the direct reader too")
    func refusedLinesAreRefused() throws {
        for line in Self.refusedLines {
            #expect(throws: (any Error).self, "\(line)") { try Send.parse(line) }
            #expect(try Send.parseDirectly(line) == nil, "\(line)")
        }
    }

    /// Every option's parsed value, by property path (`connection._ca = [...]`), from the
    /// property wrappers' own state: what the argument parser set, or "not set".
    static func values(of value: Any, prefix: String = "") -> [String] {
        var lines: [String] = []
        for child in Mirror(reflecting: value).children {
            guard let label = child.label,
                let parsed = Mirror(reflecting: child.value).children.first(where: { $0.label == "_parsedValue" })
            else { continue }
            guard let state = Mirror(reflecting: parsed.value).children.first, state.label == "value" else {
                lines.append("\(prefix)\(label) not set")
                continue
            }
            if state.value is any ParsableArguments {
                lines += values(of: state.value, prefix: "\(prefix)\(label).")
            } else {
                lines.append("\(prefix)\(label) = \(String(reflecting: state.value))")
            }
        }
        return lines
    }
}
