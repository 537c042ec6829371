import Foundation
import PushGateway
import TestSupport
import Testing

/// Apple's restricted token keys in `check` and `preflight`: a stored key recorded as serving
/// one environment or some apps is judged against what is asked, naming the answer APNs would
/// give, and the local gateway gives that very answer.
@Suite(.needsSecretService)
struct RestrictedKeyChecksTests {
    @Test func checkAndPreflightSayWhenAKeyCannotServeTheEnvironmentOrTopicAsked() throws {
        let store = try StoreCommandTests.Store()
        try store.importTokenKey(environment: "sandbox")
        let alias = "token-ABC123DEFG"
        #expect(try store.run(["check", alias, "--environment", "sandbox", "--topic", "com.example.app"]).status == 0)
        // Its app's derived topics are its own.
        try store.run(["check", alias, "--environment", "sandbox", "--topic", "com.example.app.voip"]).succeeded()

        let otherEnvironment = try store.run(["check", alias, "--environment", "production"])
            .exited(1, stdout: "restricted to sandbox", "403 BadEnvironmentKeyInToken")

        try store.run(["check", alias, "--environment", "sandbox", "--topic", "com.other.app"])
            .exited(1, stdout: "restricted to com.example.app", "403 UnrelatedKeyIdInToken")

        // preflight says the same before it connects, and the gateway, told of the same
        // restriction, answers exactly that.
        let pki = try TestPKI.Identities()
        let production = try pki.gateway(
            "production",
            [
                "--token-key", "ABC123DEFG=\(CLI.cert("keys/AuthKey_ABC123DEFG.pub.pem"))", "--team-id", "ABCDE12345",
                "--key-environment", "ABC123DEFG=sandbox",
            ]
        )
        try store.run(
            ["preflight", alias, "--environment", "production", "--topic", "com.example.app"] + production.connection
        ).exited(1, stdout: "403 BadEnvironmentKeyInToken")
        let sent = try store.run(
            [
                "send", alias, "--environment", "production", "--topic", "com.example.app", "--token",
                GatewayCommandTests.token, "--alert", "hi",
            ] + production.connection
        ).exited(1)
        #expect(sent.stderr.contains("BadEnvironmentKeyInToken"), "the warning before sending: \(sent.stderr)")
        #expect(sent.stdout.contains("403 BadEnvironmentKeyInToken"), "\(sent.stdout)")

        // If the record is wrong, the hint's command, pasted as printed, corrects it.
        let commands = HintsRunAsPrintedTests.commands(in: otherEnvironment.stdout)
        #expect(commands.count == 1, "\(otherEnvironment.stdout)")
        for command in commands {
            #expect(command.contains("--environment both"))
            try HintsRunAsPrintedTests.runAsPrinted(command).succeeded(context: "\(command)")
        }
        #expect(try store.run(["check", alias, "--environment", "production"]).status == 0)
    }
}
