import Foundation
import TestSupport
import Testing

/// Every command's `--json` report, on success and on failure, checked against the schemas in
/// docs/schemas by a validator no one here wrote (the `jsonschema` package), and the contract's
/// promises a schema cannot state checked by hand.
@Suite(.needsPrivateSecretService)
struct JSONContractTests {
    /// Validates `text` against docs/schemas/`schema`.schema.json; records every violation, and
    /// an exit status other than `status` when one is given.
    static func expectValid(
        _ schema: String,
        _ result: CLI.Result,
        lines: Bool = false,
        status: Int32? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        if let status {
            #expect(
                result.status == status,
                "\(result.arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)",
                sourceLocation: sourceLocation
            )
        }
        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let script = CLI.packageRoot.appendingPathComponent("scripts/validate-json").path
        let checked = try CLI.runProgram(
            python,
            [script] + (lines ? ["--lines"] : []) + [schema],
            stdin: result.stdout
        )
        #expect(
            checked.status == 0,
            "\(result.arguments.joined(separator: " ")) does not follow \(schema).schema.json:\n\(checked.stderr)\n\(result.stdout)",
            sourceLocation: sourceLocation
        )
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// A failed command with --json: one error object on stdout, the same error on stderr.
    static func expectFailure(
        _ result: CLI.Result,
        status: Int32,
        code: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(result.status == status, "\(result.stderr)", sourceLocation: sourceLocation)
        try expectValid("error", result, sourceLocation: sourceLocation)
        let error = try #require(try json(result.stdout)["error"] as? [String: Any], sourceLocation: sourceLocation)
        #expect(error["code"] as? String == code, "\(error)", sourceLocation: sourceLocation)
        let message = try #require(error["message"] as? String, sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func storeReportsFollowTheContract() throws {
        let pki = try TestPKI.Identities()
        let store = try StoreCommandTests.Store()
        let secret = ["MINT": GatewayCommandTests.password]
        let p12 = pki.identity("universal")

        let request = try store.run(["request", "--out", store.folder.path("push.csr"), "--json"])
        try Self.expectValid("request", request, status: 0)

        let imported = try store.run(["import", p12, "--password-env", "MINT", "--json"], environment: secret)
        try Self.expectValid("import", imported, status: 0)
        let summary = try #require(try Self.json(imported.stdout)["imported"] as? [String: Any])
        let alias = try #require(summary["credential"] as? String)
        // Topics are objects with kinds, the app's own topic first.
        let topics = try #require(summary["topics"] as? [[String: Any]])
        #expect(topics.first?["kinds"] as? [String] == ["app"], "\(topics)")

        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let tokenKey = try store.run(["import", key, "--team-id", "ABCDE12345", "--json"])
        try Self.expectValid("import", tokenKey, status: 0)
        let keyAlias = try #require(
            (try Self.json(tokenKey.stdout)["imported"] as? [String: Any])?["credential"] as? String
        )
        let updated = try store.run([
            "update", keyAlias, "--topic", "com.example.app", "--environment", "both", "--json",
        ])
        try Self.expectValid("update", updated, status: 0)

        let listed = try store.run(["list", "--json"])
        try Self.expectValid("list", listed, status: 0)

        for arguments in [
            ["check", "--json"], ["check", "--topic", "com.example.app", "--json"], ["check", alias, "--json"],
        ] {
            let checked = try store.run(arguments)
            try Self.expectValid("check", checked, status: 0)
        }
        // A finding makes exit 1, and the report is still the one JSON document on stdout.
        let mismatch = try store.run(["check", alias, "--topic", "com.example.other", "--json"])
        try Self.expectValid("check", mismatch, status: 1)

        let inspected = try store.run(
            ["inspect", p12, key, store.folder.path("push.csr"), "--password-env", "MINT", "--json"],
            environment: secret
        )
        try Self.expectValid("inspect", inspected, status: 0)
        let unreadable = try store.run(["inspect", CLI.cert("bad/garbage.pem"), "--json"])
        try Self.expectValid("inspect", unreadable, status: 2)

        // Failures: the error object, with the code a program can switch on.
        try Self.expectFailure(
            try store.run(["import", CLI.cert("bad/photo.jpg"), "--json"]),
            status: 2,
            code: "not_a_certificate"
        )
        try Self.expectFailure(try store.run(["check", "no-such-alias", "--json"]), status: 2, code: "alias_not_found")
        try Self.expectFailure(
            try store.run(["update", alias, "--topic", "com.example.app", "--json"]),
            status: 2,
            code: "not_a_token_key"
        )
        try Self.expectFailure(try store.run(["check", "--at", "2027-02-30", "--json"]), status: 64, code: "usage")
        try Self.expectFailure(try store.run(["list", "--no-such-option", "--json"]), status: 64, code: "usage")
    }

    @Test func connectionReportsFollowTheContract() throws {
        let pki = try TestPKI.Identities()
        let registry = pki.folder.path("devices.json")
        let unregistered = String(repeating: "ef", count: 32)
        try """
        {"\(unregistered)": {"topic": "com.example.app", "environment": "sandbox", "unregistered_at": 1700000000000},
         "\(GatewayCommandTests.token)": {"topic": "com.example.app", "environment": "sandbox"}}
        """.write(toFile: registry, atomically: true, encoding: .utf8)
        let gateway = try pki.gateway("sandbox", ["--devices", registry])
        let identity = pki.identity("sandbox")
        let nowhere = ["--gateway", "127.0.0.1:1", "--ca", gateway.caFile]

        let handshake = try pki.run(["handshake", identity, "--auth-check", "--json"] + gateway.connection)
        try Self.expectValid("handshake", handshake, status: 0)
        let refused = try pki.run(["handshake", identity, "--json"] + nowhere)
        try Self.expectValid("handshake", refused, status: 2)
        let failure = try #require(
            (try Self.json(refused.stdout)["handshake"] as? [String: Any])?["error"] as? [String: Any]
        )
        #expect(failure["code"] as? String == "connection_refused")

        let sent = try pki.run(
            ["send", identity, "--token", GatewayCommandTests.token, "--alert", "x", "--json"] + gateway.connection
        )
        try Self.expectValid("send", sent, status: 0)
        // The apns-id as the gateway recorded it: the same lower-case text.
        let response = try #require(try Self.json(sent.stdout)["response"] as? [String: Any])
        let id = try #require(response["apns_id"] as? String)
        #expect(try gateway.deliveries().contains { $0["apns_id"] as? String == id }, "\(id)")

        let rejected = try pki.run(
            ["send", identity, "--token", unregistered, "--alert", "x", "--json"] + gateway.connection
        )
        try Self.expectValid("send", rejected, status: 1)
        let rejection = try #require(try Self.json(rejected.stdout)["response"] as? [String: Any])
        #expect(rejection["reason"] as? String == "Unregistered")
        #expect((rejection["explanation"] as? String)?.isEmpty == false)
        #expect((rejection["fix"] as? String)?.isEmpty == false)

        try Self.expectFailure(
            try pki.run(["send", identity, "--token", GatewayCommandTests.token, "--alert", "x", "--json"] + nowhere),
            status: 2,
            code: "connection_refused"
        )

        let tokens = pki.folder.path("tokens.txt")
        try [GatewayCommandTests.token, unregistered, "not-a-token"].joined(separator: "\n").write(
            toFile: tokens,
            atomically: true,
            encoding: .utf8
        )
        let results = pki.folder.path("results.jsonl")
        let bulk = try pki.run(
            ["send", identity, "--tokens", tokens, "--results", results, "--alert", "x", "--json"] + gateway.connection
        )
        try Self.expectValid("send-bulk", bulk)
        let lines = try String(contentsOfFile: results, encoding: .utf8)
        try Self.expectValid(
            "bulk-result-line",
            CLI.Result(status: 0, stdout: lines, stderr: "", arguments: []),
            lines: true
        )
        let rejectedLine = try #require(
            lines.split(separator: "\n").map { try Self.json(String($0)) }.first {
                $0["reason"] as? String == "Unregistered"
            }
        )
        #expect(rejectedLine["explanation"] != nil && rejectedLine["fix"] != nil, "\(rejectedLine)")
        #expect(lines.contains(#""error":{"code":"malformed_token""#), "\(lines)")

        let preflight = try pki.run(["preflight", identity, "--environment", "sandbox", "--json"] + gateway.connection)
        try Self.expectValid("preflight", preflight, status: 0)
        let unreachable = try pki.run(["preflight", identity, "--environment", "sandbox", "--json"] + nowhere)
        // A network failure is "could not check" (2), as in handshake and send.
        try Self.expectValid("preflight", unreachable, status: 2)
    }

    @Test func channelAndBroadcastReportsFollowTheContract() throws {
        let setup = try TokenKeySetup(importKey: false)
        let app = ["com.example.app"]
        let created = try setup.runWithKeyFile(["channels", "create", setup.keyFile] + app + ["--json"])
        try Self.expectValid("channels", created, status: 0)
        let channel = try #require((try Self.json(created.stdout)["channel"] as? [String: Any])?["id"] as? String)
        for action in [["list"], ["show", "--channel", channel]] {
            let result = try setup.runWithKeyFile(
                ["channels", action[0], setup.keyFile] + app + action.dropFirst() + ["--json"]
            )
            try Self.expectValid("channels", result, status: 0)
        }
        let broadcast = try setup.runWithKeyFile(
            ["send", setup.keyFile, "--topic", "com.example.app", "--channel", channel, "--event", "end", "--json"]
        )
        try Self.expectValid("broadcast", broadcast, status: 0)
        let deleted = try setup.runWithKeyFile(
            ["channels", "delete", setup.keyFile] + app + ["--channel", channel, "--json"]
        )
        try Self.expectValid("channels", deleted, status: 0)

        // Rejections: the reason with its explanation and fix.
        let missing = try setup.runWithKeyFile(
            ["channels", "show", setup.keyFile] + app + ["--channel", channel, "--json"]
        )
        try Self.expectValid("channels", missing, status: 1)
        let refused = try setup.runWithKeyFile(
            ["send", setup.keyFile, "--topic", "com.example.app", "--channel", channel, "--event", "end", "--json"]
        )
        try Self.expectValid("broadcast", refused, status: 1)
        #expect(try Self.json(refused.stdout)["reason"] as? String == "ChannelNotRegistered")
    }
}
