import Foundation
import PushGateway
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// handshake, send and preflight through the real binary against the real local gateway.
struct GatewayCommandTests {
    static let password = TestPKI.Identities.password
    static let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"

    /// curl as a client with the identity `pem` that trusts `gateway`, with `arguments`.
    static func curl(_ pem: String, _ gateway: GatewayProcess, _ arguments: [String]) throws -> CLI.Result {
        try CLI.runProgram("curl", ["-sS", "-i", "--http2", "--cert", pem, "--cacert", gateway.caFile] + arguments)
    }

    static func json(_ result: CLI.Result) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "\(result.stdout)\(result.stderr)"
        )
    }

    @Test(arguments: ["sandbox", "production"] as [String])
    func certificateHandshakeAndSend(_ environment: String) throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway(environment, ["--max-concurrent-streams", "7"])
        let identity = pki.identity(environment)

        let handshake = try pki.run(
            ["handshake", identity, "--environment", environment, "--auth-check", "--json"] + gateway.connection
        )
        #expect(handshake.status == 0, "\(handshake.stderr)")
        let report = try Self.json(handshake)
        let details = try #require(report["handshake"] as? [String: Any])
        #expect(details["alpn"] as? String == "h2")
        #expect(details["trust"] as? String == "trusted")
        #expect(details["max_concurrent_streams"] as? Int == 7)
        #expect(details["tls_handshake_duration"] as? Double != nil)
        #expect((details["server_certificates"] as? [Any])?.isEmpty == false)
        #expect((report["auth_check"] as? [String: Any])?["verdict"] as? String == "accepted")

        let human = try pki.run(["handshake", identity, "--environment", environment] + gateway.connection)
        #expect(human.status == 0)
        for phase in [
            "DNS lookup", "TCP connect", "TLS handshake", "HTTP/2 ready", "MAX_CONCURRENT_STREAMS 7", "✓ trusted",
        ] {
            #expect(human.stdout.contains(phase))
        }

        let sent = try pki.run(
            ["send", identity, "--environment", environment, "--token", Self.token, "--alert", "Hello", "--json"]
                + gateway.connection
        )
        #expect(sent.status == 0, "\(sent.stderr)")
        let response = try #require(try Self.json(sent)["response"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        let apnsID = try #require(response["apns_id"] as? String)
        // apns-unique-id exists only in the sandbox, as with Apple.
        #expect((response["apns_unique_id"] != nil) == (environment == "sandbox"))
        // The gateway recorded exactly that notification.
        let delivered = try gateway.deliveries().filter { $0["device_token"] as? String == Self.token }
        #expect(delivered.count == 1)
        #expect((delivered.first?["apns_id"] as? String)?.lowercased() == apnsID.lowercased())
    }

    @Test(arguments: ["sandbox", "production"] as [String])
    func tokenAuthentication(_ environment: String) throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway(environment, GatewayUnderAttackTests.keyArguments)
        let key = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let sent = try CLI.run(
            [
                "send", key, "--team-id", "ABCDE12345", "--topic", "com.example.app", "--environment", environment,
                "--token", Self.token, "--background", "--json",
            ] + gateway.connection
        )
        #expect(sent.status == 0, "\(sent.stdout)\(sent.stderr)")
        let handshake = try CLI.run(
            [
                "handshake", key, "--team-id", "ABCDE12345", "--topic", "com.example.app", "--environment", environment,
                "--auth-check",
            ] + gateway.connection
        )
        #expect(handshake.status == 0)
        #expect(handshake.stdout.contains("credential accepted"))
        // A token signed for another team is refused, and explained.
        let wrongTeam = try CLI.run(
            [
                "send", key, "--team-id", "ZZZZZ99999", "--topic", "com.example.app", "--environment", environment,
                "--token", Self.token, "--background",
            ] + gateway.connection
        )
        #expect(wrongTeam.status == 1)
        #expect(wrongTeam.stdout.contains("InvalidProviderToken"))
        #expect(wrongTeam.stdout.contains(APNsReason.invalidProviderToken.explanation))
    }

    @Test func environmentMismatchIsCaughtAndExplained() throws {
        let pki = try TestPKI.Identities()
        let production = try pki.gateway("production")
        let sent = try pki.run(
            ["send", pki.identity("sandbox"), "--environment", "production", "--token", Self.token, "--alert", "Hi"]
                + production.connection
        )
        #expect(sent.status == 1)
        #expect(sent.stdout.contains("403 BadCertificateEnvironment"))
        #expect(sent.stdout.contains(APNsReason.badCertificateEnvironment.explanation))
        #expect(sent.stderr.contains("sandbox only"))  // warned before connecting

        let preflight = try pki.run(
            ["preflight", pki.identity("sandbox"), pki.identity("universal"), "--environment", "production", "--json"]
                + production.connection
        )
        #expect(preflight.status == 1)
        let report = try Self.json(preflight)
        #expect(report["ready"] as? Bool == false)
        let entries = try #require(report["credentials"] as? [[String: Any]])
        #expect(entries.map { $0["ready"] as? Bool } == [false, true])

        let ready = try pki.run(
            ["preflight", pki.identity("universal"), "--environment", "production"] + production.connection
        )
        #expect(ready.status == 0)
        #expect(ready.stdout.contains("1 of 1 credential ready for production"))
    }

    /// The reasons `apnsctl send` can provoke, each reported with its explanation and fix.
    @Test func reasonsAreExplained() throws {
        let pki = try TestPKI.Identities()
        let registry = pki.folder.path("devices.json")
        let otherEnvironment = String(repeating: "ab", count: 32)
        let otherTopic = String(repeating: "cd", count: 32)
        let unregistered = String(repeating: "ef", count: 32)
        try """
        {"\(otherEnvironment)": {"topic": "com.example.app", "environment": "production"},
         "\(otherTopic)": {"topic": "com.example.other", "environment": "sandbox"},
         "\(unregistered)": {"topic": "com.example.app", "environment": "sandbox", "unregistered_at": 1700000000000},
         "\(Self.token)": {"topic": "com.example.app", "environment": "sandbox"}}
        """.write(toFile: registry, atomically: true, encoding: .utf8)
        let gateway = try pki.gateway("sandbox", ["--devices", registry])
        let identity = pki.identity("sandbox")
        let cases: [(token: String, extra: [String], status: Int, reason: APNsReason)] = [
            (otherEnvironment, [], 400, .badDeviceToken),
            (otherTopic, [], 400, .deviceTokenNotForTopic),
            (unregistered, [], 410, .unregistered),
            (Self.token, ["--topic", "com.not.covered"], 400, .topicDisallowed),
        ]
        for item in cases {
            let result = try pki.run(
                ["send", identity, "--token", item.token, "--alert", "x"] + item.extra + gateway.connection
            )
            #expect(result.status == 1, "\(item.reason)")
            #expect(result.stdout.contains("\(item.status) \(item.reason.rawValue)"))
            #expect(result.stdout.contains(item.reason.explanation))
            #expect(result.stdout.contains(item.reason.fix))
            if item.reason == .unregistered { #expect(result.stdout.contains("2023-11-14 22:13:20 UTC")) }
        }
        #expect(
            try pki.run(["send", identity, "--token", Self.token, "--alert", "x"] + gateway.connection).status == 0
        )

        // A background push must use priority 5: refused before sending, naming what APNs would
        // answer (the gateway's own BadPriority is in ReasonTests).
        let priority = try pki.run(
            ["send", identity, "--token", Self.token, "--background", "--priority", "10"] + gateway.connection
        )
        #expect(priority.status == 64)
        #expect(priority.stderr.contains("priority 5") && priority.stderr.contains("BadPriority"))

        // A token key with no topic recorded and no --topic: APNs cannot pick one.
        let tokenGateway = try pki.gateway("sandbox", GatewayUnderAttackTests.keyArguments)
        let noTopic = try CLI.run(
            [
                "send", CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--token", Self.token,
                "--background",
            ] + tokenGateway.connection
        )
        // A .p8 names no app: refused before anything is sent, instead of APNs' 400 MissingTopic.
        #expect(noTopic.status == 64)
        #expect(noTopic.stderr.contains("give --topic"), "\(noTopic.stderr)")
        #expect(try tokenGateway.deliveries().isEmpty)
        // A certificate where the gateway takes only tokens (no client CA): no provider token at all.
        let tokenOnly = try GatewayProcess(
            pki.folder,
            name: "token-only",
            arguments: ["--environment", "sandbox"] + GatewayUnderAttackTests.keyArguments
        )
        let noToken = try pki.run(["send", identity, "--token", Self.token, "--alert", "x"] + tokenOnly.connection)
        #expect(noToken.status == 1)
        #expect(noToken.stdout.contains("403 MissingProviderToken"))
        #expect(noToken.stdout.contains(APNsReason.missingProviderToken.explanation))

        // Server-side trouble, injected.
        for (option, status, reason) in [
            ("--rate-429", 429, APNsReason.tooManyRequests), ("--rate-500", 500, .internalServerError),
            ("--rate-503", 503, .serviceUnavailable),
        ] {
            let faulty = try pki.gateway("sandbox", [option, "1"])
            let result = try pki.run(["send", identity, "--token", Self.token, "--alert", "x"] + faulty.connection)
            #expect(result.status == 1)
            #expect(result.stdout.contains("\(status) \(reason.rawValue)"))
            #expect(result.stdout.contains(reason.explanation))
        }
    }

    @Test func badInputIsRefusedBeforeSending() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let identity = pki.identity("sandbox")
        let oddToken = try pki.run(["send", identity, "--token", "abc", "--alert", "x"] + gateway.connection)
        #expect(oddToken.status == 2)
        #expect(oddToken.stderr.contains("3 hex digits"))
        let big = pki.folder.path("big.json")
        try "{\"aps\":{\"alert\":\"\(String(repeating: "x", count: 5000))\"}}".write(
            toFile: big,
            atomically: true,
            encoding: .utf8
        )
        let tooBig = try pki.run(["send", identity, "--token", Self.token, "--payload", big] + gateway.connection)
        #expect(tooBig.status == 2)
        #expect(tooBig.stderr.contains("5020 bytes"))
        #expect(tooBig.stderr.contains("4096"))
        #expect(try gateway.deliveries().isEmpty)
    }

    @Test func environmentProxyIsBypassedForLoopbackButAnExplicitOneIsUsed() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let deadProxy = "http://127.0.0.1:1"
        let bypassed = try CLI.run(
            ["handshake", pki.identity("sandbox"), "--password-env", "MINT"] + gateway.connection,
            environment: ["MINT": Self.password, "HTTPS_PROXY": deadProxy]
        )
        #expect(bypassed.status == 0, "\(bypassed.stderr)")
        let explicit = try CLI.run(
            ["handshake", pki.identity("sandbox"), "--password-env", "MINT", "--proxy", deadProxy, "--json"]
                + gateway.connection,
            environment: ["MINT": Self.password]
        )
        #expect(explicit.status == 2)
        #expect((try Self.json(explicit)["handshake"] as? [String: Any])?["proxy"] != nil)
    }

    @Test func keyThatDoesNotMatchIsRefusedBeforeConnecting() throws {
        let result = try CLI.run(
            [
                "send", "--password-env", "P", CLI.cert("p12/mismatched-key.p12"), "--token", Self.token, "--alert",
                "x",
                "--gateway", "127.0.0.1:1",
            ],
            environment: ["P": "apnsctl-test"]
        )
        #expect(result.status == 2)
        #expect(result.stderr.contains("does not belong to its certificate"))
        #expect(!result.stderr.lowercased().contains("refused"))  // it never tried to connect
        let none = try CLI.run(
            ["handshake", "--password-env", "P", CLI.cert("p12/cert-only.p12"), "--gateway", "127.0.0.1:1"],
            environment: ["P": "apnsctl-test"]
        )
        #expect(none.status == 2)
        #expect(none.stderr.contains("no private key"))
    }

    /// docs/troubleshooting.md carries exactly the texts `send` prints, for every known reason.
    @Test func troubleshootingPageMatchesTheTool() throws {
        let page = try String(
            contentsOf: CLI.packageRoot.appendingPathComponent("docs/troubleshooting.md"),
            encoding: .utf8
        )
        for reason in APNsReason.allKnown {
            let row = page.split(separator: "\n").first { $0.hasPrefix("| \(reason.rawValue) |") }
            #expect(row != nil, "no row for \(reason.rawValue)")
            #expect(row?.contains(reason.explanation) == true, "\(reason.rawValue): explanation differs")
            #expect(
                row?.contains(reason.fix.replacingOccurrences(of: "|", with: "/")) == true,
                "\(reason.rawValue): fix differs"
            )
        }
    }

    @Test func connectionFailuresAreNamed() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let identity = pki.identity("sandbox")
        // Nothing listening.
        let refused = try pki.run(["handshake", identity, "--gateway", "127.0.0.1:1", "--ca", gateway.caFile])
        #expect(refused.status == 2)
        #expect(refused.stderr.lowercased().contains("refused"))
        // A server this machine does not trust (no --ca): the 2025 root change is the hint.
        let untrusted = try pki.run(["handshake", identity, "--gateway", gateway.address])
        #expect(untrusted.status == 2)
        #expect(untrusted.stdout.contains("untrusted"))
        #expect(untrusted.stderr.contains("USERTrust"))
        // A server that accepts TCP and never speaks TLS: a timeout, not a hang.
        let silent = try SilentListener()
        let stalled = try pki.run(["handshake", identity, "--gateway", "127.0.0.1:\(silent.port)", "--timeout", "2"])
        #expect(stalled.status == 2)
        #expect(stalled.stderr.lowercased().contains("tls"))
        #expect(stalled.stderr.contains("did not finish within 2.0 s"))
    }

    @Test func connectionClosedMidRequestAndWrongHostName() throws {
        let pki = try TestPKI.Identities()
        // The gateway drops the connection when the request arrives, without answering.
        let dropping = try pki.gateway("sandbox", ["--close-after", "0"])
        let dropped = try pki.run(
            ["send", pki.identity("sandbox"), "--token", Self.token, "--alert", "x", "--json"] + dropping.connection
        )
        #expect(dropped.status == 2)
        #expect(dropped.stderr.lowercased().contains("closed"))
        #expect(dropped.stderr.contains("may have been delivered"))
        #expect(try dropping.deliveries().isEmpty)

        // A server certificate from a trusted CA, but for another name.
        let folder = pki.folder
        let other = try TestPKI.serverIdentity(host: "other.example", in: folder, name: "other")
        let misnamed = try GatewayProcess(
            folder,
            name: "misnamed",
            arguments: [
                "--client-ca", pki.clientCA, "--cert", other.certificate, "--key", other.key,
            ]
        )
        let result = try pki.run([
            "handshake", pki.identity("sandbox"), "--json", "--gateway", misnamed.address, "--ca",
            CLI.cert("ca/gateway-test-ca.pem"),
        ])
        #expect(result.status == 2)
        let report = try #require(try Self.json(result)["handshake"] as? [String: Any])
        #expect(report["trust"] as? String == "hostname_mismatch")
    }

    /// Clients we did not write: curl, as Apple documents, and the Python client aioapns.
    @Test func curlInterop() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let pem = try pki.pem("sandbox")
        let apnsID = UUID().uuidString.lowercased()
        let curl = try Self.curl(
            pem,
            gateway,
            [
                "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", "-H", "apns-id: \(apnsID)",
                "--data", "{\"aps\":{\"alert\":\"from curl\"}}",
                "https://localhost:\(gateway.port)/3/device/\(Self.token)",
            ]
        )
        #expect(curl.status == 0, "\(curl.stderr)")
        #expect(curl.stdout.hasPrefix("HTTP/2 200"))
        #expect(curl.stdout.lowercased().contains("apns-id: \(apnsID)"))
        // And a rejection, with APNs' JSON body.
        let rejected = try Self.curl(
            pem,
            gateway,
            [
                "-H", "apns-topic: com.example.app", "-H", "apns-priority: 7",
                "--data", "{\"aps\":{}}", "https://localhost:\(gateway.port)/3/device/\(Self.token)",
            ]
        )
        #expect(rejected.stdout.hasPrefix("HTTP/2 400"))
        #expect(rejected.stdout.contains("{\"reason\":\"BadPriority\"}"))
        let delivered = try gateway.deliveries()
        #expect(delivered.count == 1)
        #expect(
            ((delivered.first?["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String
                == "from curl"
        )
        #expect((delivered.first?["apns_id"] as? String)?.lowercased() == apnsID)
    }

    /// Reasons that apnsctl's own client refuses to provoke (it validates first), produced by
    /// curl as a client that sends whatever it is told; their explanations are unit-tested.
    @Test func gatewayAnswersMalformedRequestsAsAPNsDoes() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let pem = try pki.pem("sandbox")
        let base = "https://localhost:\(gateway.port)"
        let big = "{\"aps\":{\"alert\":\"\(String(repeating: "x", count: 4100))\"}}"
        let cases: [(arguments: [String], status: Int, reason: String)] = [
            (
                [
                    "-H", "apns-collapse-id: \(String(repeating: "c", count: 65))", "--data", "{}",
                    "\(base)/3/device/\(Self.token)",
                ], 400, "BadCollapseId"
            ),
            (
                ["-H", "apns-expiration: tomorrow", "--data", "{}", "\(base)/3/device/\(Self.token)"], 400,
                "BadExpirationDate"
            ),
            (["-H", "apns-id: not-a-uuid", "--data", "{}", "\(base)/3/device/\(Self.token)"], 400, "BadMessageId"),
            (
                ["-H", "apns-push-type: carrier-pigeon", "--data", "{}", "\(base)/3/device/\(Self.token)"], 400,
                "InvalidPushType"
            ),
            (["--data", "", "\(base)/3/device/\(Self.token)"], 400, "PayloadEmpty"),
            (["--data", big, "\(base)/3/device/\(Self.token)"], 413, "PayloadTooLarge"),
            (["--data", "{}", "\(base)/4/other"], 404, "BadPath"),
            (["-X", "GET", "\(base)/3/device/\(Self.token)"], 405, "MethodNotAllowed"),
            (["--data", "{}", "\(base)/3/device/"], 400, "MissingDeviceToken"),
            (["--data", "{}", "\(base)/3/device/xyz"], 400, "BadDeviceToken"),
        ]
        for item in cases {
            let result = try Self.curl(pem, gateway, ["-H", "apns-topic: com.example.app"] + item.arguments)
            #expect(result.stdout.hasPrefix("HTTP/2 \(item.status)"), "\(item.reason): \(result.stdout.prefix(200))")
            #expect(result.stdout.contains("{\"reason\":\"\(item.reason)\"}"), "\(item.reason)")
            #expect(APNsReason(rawValue: item.reason).isKnown)
        }
        #expect(try gateway.deliveries().isEmpty)
    }

    @Test func aioapnsInterop() throws {
        let pki = try TestPKI.Identities()
        let gateway = try pki.gateway("sandbox")
        let pem = try pki.pem("sandbox")
        let script = """
            import asyncio, ssl, sys, json
            from aioapns import APNs, NotificationRequest, PushType
            from aioapns.connection import APNsDevelopmentClientProtocol
            # Point the real client at the local gateway instead of Apple.
            APNsDevelopmentClientProtocol.APNS_SERVER = "localhost"
            APNsDevelopmentClientProtocol.APNS_PORT = int(sys.argv[3])
            async def main():
                context = ssl.create_default_context(cafile=sys.argv[2])
                context.load_cert_chain(sys.argv[1])
                results = []
                for topic in ["com.example.app", "com.example.not-covered"]:
                    client = APNs(client_cert=sys.argv[1], ssl_context=context, use_sandbox=True, topic=topic)
                    result = await client.send_notification(NotificationRequest(
                        device_token=sys.argv[4], message={"aps": {"alert": "from aioapns"}}, push_type=PushType.ALERT))
                    results.append({"ok": result.is_successful, "status": str(result.status), "reason": result.description})
                print(json.dumps(results))
            asyncio.run(main())
            """
        let python = CLI.packageRoot.appendingPathComponent(".venv/bin/python").path
        let result = try CLI.runProgram(
            python,
            ["-c", script, pem, gateway.caFile, String(gateway.port), Self.token],
            timeout: 60
        )
        #expect(result.status == 0, "\(result.stderr)")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(answers.first?["ok"] as? Bool == true)
        #expect(answers.first?["status"] as? String == "200")
        #expect(answers.last?["ok"] as? Bool == false)
        #expect(answers.last?["reason"] as? String == "TopicDisallowed")
        #expect(try gateway.deliveries().count == 1)
    }
}

/// A TCP listener that accepts and then says nothing: a stalled TLS handshake.
final class SilentListener: @unchecked Sendable {
    let fd: Int32
    let port: Int
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw CLIError(message: "cannot listen") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }
    deinit { close(fd) }
}
