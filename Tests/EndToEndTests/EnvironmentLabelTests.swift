import Foundation
import TestSupport
import Testing

/// What `send` says of the environment of a server given with `--gateway`: seen when the server
/// shows it (a sandbox sends apns-unique-id), assumed otherwise, never a guess passed off as fact.
@Suite(.needsPrivateSecretService)
struct EnvironmentLabelTests {
    @Test func theEnvironmentIsSeenOrSaidToBeAssumed() throws {
        let pki = try TestPKI.Identities()
        let sandbox = try pki.gateway("sandbox")
        let seen = try pki.run(
            [
                "send", pki.identity("universal"), "--environment", "sandbox", "--token", GatewayCommandTests.token,
                "--alert", "Hi",
            ] + sandbox.connection
        )
        #expect(seen.status == 0, "\(seen.stderr)")
        #expect(seen.stdout.contains("(sandbox, as its apns-unique-id shows)"), "\(seen.stdout)")
        // Asked for production, the server shows it is a sandbox.
        let contradicted = try pki.run(
            [
                "send", pki.identity("universal"), "--environment", "production", "--token",
                GatewayCommandTests.token, "--alert", "Hi",
            ] + sandbox.connection
        )
        #expect(
            contradicted.stdout.contains("(sandbox by its apns-unique-id, not production)"),
            "\(contradicted.stdout)"
        )

        let production = try pki.gateway("production")
        let assumed = try pki.run(
            [
                "send", pki.identity("universal"), "--environment", "production", "--token",
                GatewayCommandTests.token, "--alert", "Hi",
            ] + production.connection
        )
        #expect(assumed.status == 0, "\(assumed.stderr)")
        #expect(assumed.stdout.contains("(production, assumed)"), "\(assumed.stdout)")
    }
}
