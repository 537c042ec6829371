import Foundation
import TestSupport
import Testing

/// Every command's `--json` report, on success and on failure, checked against the schemas in
/// docs/schemas by a validator no one here wrote (the `jsonschema` package), and the contract's
/// promises a schema cannot state checked by hand.
@Suite(.needsPrivateSecretService)
struct JSONContractTests {
    /// Validates `text` against docs/schemas/`schema`.schema.json; records every violation.
    static func expectValid(
        _ schema: String,
        _ result: CLI.Result,
        lines: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
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
        #expect(request.status == 0, "\(request.stderr)")
        try Self.expectValid("request", request)

        let imported = try store.run(["import", p12, "--password-env", "MINT", "--json"], environment: secret)
        #expect(imported.status == 0, "\(imported.stderr)")
        try Self.expectValid("import", imported)
        let summary = try #require(try Self.json(imported.stdout)["imported"] as? [String: Any])
        let alias = try #require(summary["credential"] as? String)
        // Topics are objects with kinds, the app's own topic first.
        let topics = try #require(summary["topics"] as? [[String: Any]])
        #expect(topics.first?["kinds"] as? [String] == ["app"], "\(topics)")

        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let tokenKey = try store.run(["import", key, "--team-id", "ABCDE12345", "--json"])
        #expect(tokenKey.status == 0, "\(tokenKey.stderr)")
        try Self.expectValid("import", tokenKey)
        let keyAlias = try #require(
            (try Self.json(tokenKey.stdout)["imported"] as? [String: Any])?["credential"] as? String
        )
        let updated = try store.run([
            "update", keyAlias, "--topic", "com.example.app", "--environment", "both", "--json",
        ])
        #expect(updated.status == 0, "\(updated.stderr)")
        try Self.expectValid("update", updated)

        let listed = try store.run(["list", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        try Self.expectValid("list", listed)

        for arguments in [
            ["check", "--json"], ["check", "--topic", "com.example.app", "--json"], ["check", alias, "--json"],
        ] {
            let checked = try store.run(arguments)
            #expect(checked.status == 0, "\(arguments): \(checked.stdout)\(checked.stderr)")
            try Self.expectValid("check", checked)
        }
        // A finding makes exit 1, and the report is still the one JSON document on stdout.
        let mismatch = try store.run(["check", alias, "--topic", "com.example.other", "--json"])
        #expect(mismatch.status == 1)
        try Self.expectValid("check", mismatch)

        let inspected = try store.run(
            ["inspect", p12, key, store.folder.path("push.csr"), "--password-env", "MINT", "--json"],
            environment: secret
        )
        #expect(inspected.status == 0, "\(inspected.stderr)")
        try Self.expectValid("inspect", inspected)
        let unreadable = try store.run(["inspect", CLI.cert("bad/garbage.pem"), "--json"])
        #expect(unreadable.status == 2)
        try Self.expectValid("inspect", unreadable)

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
        #expect(handshake.status == 0, "\(handshake.stderr)")
        try Self.expectValid("handshake", handshake)
        let refused = try pki.run(["handshake", identity, "--json"] + nowhere)
        #expect(refused.status == 2)
        try Self.expectValid("handshake", refused)
        let failure = try #require(
            (try Self.json(refused.stdout)["handshake"] as? [String: Any])?["error"] as? [String: Any]
        )
        #expect(failure["code"] as? String == "connection_refused")

        let sent = try pki.run(
            ["send", identity, "--token", GatewayCommandTests.token, "--alert", "x", "--json"] + gateway.connection
        )
        #expect(sent.status == 0, "\(sent.stderr)")
        try Self.expectValid("send", sent)
        // The apns-id as the gateway recorded it: the same lower-case text.
        let response = try #require(try Self.json(sent.stdout)["response"] as? [String: Any])
        let id = try #require(response["apns_id"] as? String)
        #expect(try gateway.deliveries().contains { $0["apns_id"] as? String == id }, "\(id)")

        let rejected = try pki.run(
            ["send", identity, "--token", unregistered, "--alert", "x", "--json"] + gateway.connection
        )
        #expect(rejected.status == 1)
        try Self.expectValid("send", rejected)
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
        #expect(preflight.status == 0, "\(preflight.stdout)\(preflight.stderr)")
        try Self.expectValid("preflight", preflight)
        let unreachable = try pki.run(["preflight", identity, "--environment", "sandbox", "--json"] + nowhere)
        // A network failure is "could not check" (2), as in handshake and send.
        #expect(unreachable.status == 2)
        try Self.expectValid("preflight", unreachable)
    }

    @Test func channelAndBroadcastReportsFollowTheContract() throws {
        let setup = try TokenKeySetup(importKey: false)
        let app = ["com.example.app"]
        let created = try setup.runWithKeyFile(["channels", "create", setup.keyFile] + app + ["--json"])
        #expect(created.status == 0, "\(created.stderr)")
        try Self.expectValid("channels", created)
        let channel = try #require((try Self.json(created.stdout)["channel"] as? [String: Any])?["id"] as? String)
        for action in [["list"], ["show", "--channel", channel]] {
            let result = try setup.runWithKeyFile(
                ["channels", action[0], setup.keyFile] + app + action.dropFirst() + ["--json"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            try Self.expectValid("channels", result)
        }
        let broadcast = try setup.runWithKeyFile(
            ["send", setup.keyFile, "--topic", "com.example.app", "--channel", channel, "--event", "end", "--json"]
        )
        #expect(broadcast.status == 0, "\(broadcast.stderr)")
        try Self.expectValid("broadcast", broadcast)
        let deleted = try setup.runWithKeyFile(
            ["channels", "delete", setup.keyFile] + app + ["--channel", channel, "--json"]
        )
        #expect(deleted.status == 0, "\(deleted.stderr)")
        try Self.expectValid("channels", deleted)

        // Rejections: the reason with its explanation and fix.
        let missing = try setup.runWithKeyFile(
            ["channels", "show", setup.keyFile] + app + ["--channel", channel, "--json"]
        )
        #expect(missing.status == 1)
        try Self.expectValid("channels", missing)
        let refused = try setup.runWithKeyFile(
            ["send", setup.keyFile, "--topic", "com.example.app", "--channel", channel, "--event", "end", "--json"]
        )
        #expect(refused.status == 1)
        try Self.expectValid("broadcast", refused)
        #expect(try Self.json(refused.stdout)["reason"] as? String == "ChannelNotRegistered")
    }
}
