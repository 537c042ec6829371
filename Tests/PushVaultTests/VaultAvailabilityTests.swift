import Foundation
import TestSupport
import Testing

@testable import PushVault

#if canImport(Glibc)
import Glibc
#endif

/// A sealed server and a stopped one are told within seconds (the client's timeouts are a few
/// seconds; the tests allow 30, so that a busy machine cannot fail them, while a client without
/// timeouts still does); each test has a server of its own, since it seals or stops it.
@Suite(
    "Sealed and unreachable Vault",
    .enabled(if: BaoDevServer.isAvailable, Comment(rawValue: BaoDevServer.missingMessage))
)
struct VaultAvailabilityTests {
    @Test("A sealed server is reported as sealed within seconds")
    func sealed() async throws {
        let server = try await BaoDevServer.start()
        defer { server.stop() }
        let client = try server.rootClient()
        try await client.kv().write("before-seal", data: ["a": "b"])
        try await server.admin(.POST, "sys/seal")

        let (error, elapsed) = try await Self.timed { try await client.kv().read("before-seal") }
        #expect(error?.code == .sealed)
        #expect(error?.subject.address == server.address)
        #expect(elapsed < .seconds(30), "not for ever: \(elapsed)")
        #expect(try await client.isSealed())
        let access = await #expect(throws: VaultError.self) { try await client.checkAccess() }
        #expect(access?.code == .sealed)
        print("sealed: reported in \(elapsed)")
    }

    @Test("A stopped server is reported as unreachable within seconds, naming its address")
    func stopped() async throws {
        let server = try await BaoDevServer.start()
        let client = try server.rootClient()
        try await client.kv().write("before-stop", data: ["a": "b"])
        server.stop()

        let (error, elapsed) = try await Self.timed { try await client.kv().read("before-stop") }
        #expect(error?.code == .unreachable)
        #expect(error?.message.contains(server.address) == true)
        #expect(elapsed < .seconds(30), "not for ever: \(elapsed)")
        print("unreachable: reported in \(elapsed)")
    }

    /// The error `call` throws and how long it took to come, measured apart from the shared
    /// pool, which the suites beside this one keep busy (``measuredApart(_:)``): the bound is
    /// on the client's timeouts, not on when a thread was free to resume the test.
    static func timed<T: Sendable>(
        _ call: @escaping @Sendable () async throws -> T
    ) async throws -> (VaultError?, Duration) {
        try await measuredApart {
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: VaultError.self) { try await call() }
            return (error, clock.now - start)
        }
    }

    @Test("Over TLS: the server's CA from VAULT_CACERT is trusted, the system's alone is not")
    func tls() async throws {
        let server = try await BaoDevServer.start(tls: true)
        defer { server.stop() }
        let caFile = try #require(server.caFile)
        #expect(server.address.hasPrefix("https://"))
        try await server.rootClient().kv().write("over-tls", data: ["a": "b"])
        let byName = try server.client(environment: ["VAULT_ADDR": "https://localhost:\(server.port)"])
        #expect(try await byName.kv().read("over-tls").data == ["a": "b"])
        #expect(byName.configuration.caFile == caFile)

        // Without the CA file the server's certificate is not trusted.
        let untrusted = try VaultClient(
            configuration: VaultConfiguration(address: server.address, tokenSource: .token(.init("ROOT")))
        )
        let error = await #expect(throws: VaultError.self) { try await untrusted.isSealed() }
        #expect(error?.code == .unreachable)
        #expect(error?.message.contains("TLS") == true)

        let missing = #expect(throws: VaultError.self) {
            try VaultClient(
                configuration: VaultConfiguration(
                    address: server.address,
                    tokenSource: .none,
                    caFile: server.folder.appendingPathComponent("no-such-ca.pem").path
                )
            )
        }
        #expect(missing?.code == .invalidConfiguration)
    }
}

/// No server at all, or one that never answers: no OpenBao needed, so these always run.
@Suite("Vault that does not answer")
struct VaultNoAnswerTests {
    @Test("A server that takes the connection but never answers is unreachable within seconds")
    func silentServer() async throws {
        // A listening socket nobody accepts on: the kernel completes the handshake, and the
        // request waits for an answer that never comes, until the request timeout.
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        #expect(bound == 0)
        #expect(listen(descriptor, 8) == 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let client = try VaultClient(
            configuration: VaultConfiguration(address: "http://127.0.0.1:\(port)", tokenSource: .token(.init("x")))
        )
        let (error, elapsed) = try await VaultAvailabilityTests.timed { try await client.isSealed() }
        #expect(error?.code == .unreachable)
        #expect(error?.message.contains("no answer within") == true)
        #expect(elapsed < .seconds(30), "not for ever: \(elapsed)")
        print("silent server: reported in \(elapsed)")
    }

    @Test("An address that never answers is unreachable within seconds (the connect timeout)")
    func blackHole() async throws {
        // TEST-NET-1 (RFC 5737): routed nowhere, so a connection either fails at once or waits.
        let configuration = try VaultConfiguration(address: "https://192.0.2.1:8200", tokenSource: .token(.init("x")))
        let client = try VaultClient(configuration: configuration)
        let (error, elapsed) = try await VaultAvailabilityTests.timed { try await client.kv().read("anything") }
        #expect(error?.code == .unreachable)
        #expect(elapsed < .seconds(30), "not for ever: \(elapsed)")
        print("black hole: reported in \(elapsed)")
    }
}
