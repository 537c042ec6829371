import Foundation
import TestSupport
import Testing

/// `check` on a host whose Secret Service is out of reach (a monitoring host, a CI runner): what
/// the stored certificates say is still reported, the key is marked unverified, and the hint
/// names --skip-secrets in a command that works as printed.
@Suite(.needsPrivateSecretService)
struct CheckWithoutSecretServiceTests {
    @Test func expiryIsShownAndTheKeyMarkedUnverified() throws {
        let store = try StoreCommandTests.Store()
        let folder = try TemporaryFolder()
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        try store.importTokenKey()
        let noBus = (environment: ["XDG_RUNTIME_DIR": folder.path("no-runtime")], remove: ["DBUS_SESSION_BUS_ADDRESS"])

        let human = try CLI.run(
            ["check", "--store", store.path],
            environment: noBus.environment,
            removeEnvironment: noBus.remove,
            timeout: 30
        )
        // Could not check everything: the keys.
        #expect(human.status == 2, "\(human.stdout)\(human.stderr)")
        #expect(human.stdout.contains("expires 2046-11-22"), "\(human.stdout)")
        #expect(human.stdout.contains("warning: The private key was not verified"))
        #expect(human.stdout.contains("no D-Bus session bus"))
        #expect(human.stdout.contains("--skip-secrets"))

        let json = try CLI.run(
            ["check", "--json", "--store", store.path],
            environment: noBus.environment,
            removeEnvironment: noBus.remove,
            timeout: 30
        )
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let credentials = try #require(report["credentials"] as? [[String: Any]])
        #expect(credentials.count == 2)
        for credential in credentials {
            #expect(credential["error"] == nil)
            let codes = (credential["findings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            #expect(codes == ["secret_unverified"], "\(credential)")
        }
        let certificate = try #require(credentials.first { $0["kind"] as? String == "certificate" })
        #expect(certificate["not_after"] as? String == "2046-11-22T03:08:01Z")
        #expect(certificate["environments"] as? [String] == ["sandbox"])
        #expect(topicNames(certificate["topics"]) == ["com.example.app"])

        // The hint's command, pasted as printed on the same host, checks what the files say.
        let commands = HintsRunAsPrintedTests.commands(in: human.stdout)
        let skip = try #require(
            commands.first { $0.contains("--skip-secrets") && $0.contains("com.example.app-sandbox") }
        )
        let pasted = try HintsRunAsPrintedTests.runAsPrinted(
            skip,
            environment: noBus.environment,
            removeEnvironment: noBus.remove
        )
        #expect(pasted.status == 0, "\(skip)\n\(pasted.stdout)\(pasted.stderr)")
        #expect(pasted.stdout.contains("expires 2046-11-22"))
    }
}
