import Foundation
import TestSupport
import Testing

/// A server that refuses the client certificate has judged the credential: exit 1, naming why.
struct RefusedCredentialTests {
    /// `certs/p12/expired.p12` is signed by the test WWDR CA and expired before these tests run.
    static let expired = CLI.cert("p12/expired.p12")

    func gateway(_ folder: TemporaryFolder) throws -> GatewayProcess {
        try GatewayProcess(folder, name: "refusing", arguments: ["--client-ca", CLI.cert("ca/wwdr-test-ca.pem")])
    }

    func run(_ arguments: [String]) throws -> CLI.Result {
        try CLI.run(arguments + ["--password-env", "P12"], environment: ["P12": "apnsctl-test"])
    }

    @Test func anExpiredClientCertificateIsAProblemNamedWithItsExpiryNotAConnectionFailure() throws {
        let folder = try TemporaryFolder()
        let gateway = try gateway(folder)
        let expiry = try #require(
            try run(["inspect", "--json", Self.expired]).stdout.firstMatch(of: /"not_after" *: *"(\d{4}-\d{2}-\d{2})/)?
                .1
        )
        for command in [
            ["handshake", Self.expired],
            ["send", Self.expired, "--token", GatewayCommandTests.token, "--alert", "x"],
            ["handshake", Self.expired, "--auth-check"],
        ] {
            let result = try run(command + gateway.connection)
                .exited(1, stderr: "refused the client certificate", "certificate_expired", context: "\(command[0])")
            #expect(result.stderr.contains("expired on \(expiry)"), "\(command[0]) names the expiry: \(result.stderr)")
            #expect(!result.stderr.contains("connect again"))
        }
        #expect(try gateway.deliveries().isEmpty)
    }
}
