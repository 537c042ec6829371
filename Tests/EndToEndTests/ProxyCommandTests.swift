import Foundation
import Glibc
import TestSupport
import Testing

/// Proxy failures are the proxy's, said so and named with where the setting came from.
struct ProxyCommandTests {
    /// A loopback port with nothing listening: a proxy that refuses every connection.
    static func closedPort() throws -> Int {
        // Bind port 0 to learn a free port, then close it: nothing listens there afterwards.
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func aProxyThatCannotBeReachedIsNamedWithItsSourceNotBlamedOnAPNs() throws {
        let port = try Self.closedPort()
        let p8 = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let common = ["handshake", p8, "--team-id", "ABCDE12345", "--environment", "sandbox", "--timeout", "5"]
        let fromEnvironment = try CLI.run(common, environment: ["HTTPS_PROXY": "http://127.0.0.1:\(port)"])
        #expect(fromEnvironment.status == 2)
        #expect(
            fromEnvironment.stderr.contains("proxy 127.0.0.1:\(port) (from HTTPS_PROXY)"),
            "\(fromEnvironment.stderr)"
        )
        #expect(!fromEnvironment.stderr.contains("APNs uses 443 or 2197"))

        let explicit = try CLI.run(common + ["--proxy", "http://127.0.0.1:\(port)"])
        #expect(explicit.status == 2)
        #expect(explicit.stderr.contains("proxy 127.0.0.1:\(port) (from --proxy)"), "\(explicit.stderr)")
    }

    @Test func proxiesThatAreNotHTTPConnectAreRefusedAsUsageErrors() throws {
        let p8 = CLI.cert("keys/AuthKey_ABC123DEFG.p8")
        let common = ["handshake", p8, "--team-id", "ABCDE12345", "--environment", "sandbox", "--timeout", "5"]
        let option = try CLI.run(common + ["--proxy", "socks5://127.0.0.1:1080"])
        #expect(option.status == 64)
        #expect(option.stderr.contains("socks5"))
        let variable = try CLI.run(common, environment: ["HTTPS_PROXY": "socks5://127.0.0.1:1080"])
        #expect(variable.status == 64, "\(variable.stderr)")
        #expect(variable.stderr.contains("HTTPS_PROXY"))
        #expect(variable.stderr.contains("only HTTP CONNECT proxies"))
    }
}
