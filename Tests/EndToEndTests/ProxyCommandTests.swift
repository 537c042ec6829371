import Foundation
import TestSupport
import Testing

/// Proxy failures are the proxy's, said so and named with where the setting came from.
struct ProxyCommandTests {
    /// A loopback port with nothing listening: a proxy that refuses every connection.
    static func closedPort() throws -> Int { try unusedLoopbackPort() }

    @Test func aProxyThatCannotBeReachedIsNamedWithItsSourceNotBlamedOnAPNs() throws {
        let port = try Self.closedPort()
        let p8 = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let common = ["handshake", p8, "--team-id", "ABCDE12345", "--environment", "sandbox", "--timeout", "5"]
        let fromEnvironment = try CLI.run(common, environment: ["HTTPS_PROXY": "http://127.0.0.1:\(port)"]).exited(
            2,
            stderr: "proxy 127.0.0.1:\(port) (from HTTPS_PROXY)"
        )
        #expect(!fromEnvironment.stderr.contains("APNs uses 443 or 2197"))

        try CLI.run(common + ["--proxy", "http://127.0.0.1:\(port)"])
            .exited(2, stderr: "proxy 127.0.0.1:\(port) (from --proxy)")
    }

    @Test func proxiesThatAreNotHTTPConnectAreRefusedAsUsageErrors() throws {
        let p8 = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let common = ["handshake", p8, "--team-id", "ABCDE12345", "--environment", "sandbox", "--timeout", "5"]
        try CLI.run(common + ["--proxy", "socks5://127.0.0.1:1080"]).exited(64, stderr: "socks5")
        try CLI.run(common, environment: ["HTTPS_PROXY": "socks5://127.0.0.1:1080"])
            .exited(64, stderr: "HTTPS_PROXY", "only HTTP CONNECT proxies")
    }
}
