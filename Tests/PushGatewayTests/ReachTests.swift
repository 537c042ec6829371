import Foundation
import LocalGateway
import PushStore
import TestSupport
import Testing

@testable import PushGateway

/// Every network: one family only (-4/-6), Happy Eyeballs across both, addresses given for a
/// name, and the anchor of the chain a handshake verified, on real TLS to local gateways.
@Suite(.timeLimit(.minutes(2))) struct ReachTests {
    @Test func fixedAddressesParseAsCurlWritesThem() throws {
        let both = try FixedAddress.parse("localhost:8443:[::1],127.0.0.1")
        #expect(both == FixedAddress(host: "localhost", port: 8443, addresses: ["::1", "127.0.0.1"]))
        #expect(try FixedAddress.parse("api.push.apple.com:443:::1").addresses == ["::1"])
        for bad in ["localhost:8443", "localhost:http:127.0.0.1", ":443:127.0.0.1", "localhost:443:not-an-ip"] {
            #expect(throws: GatewayError.self, "\(bad)") { try FixedAddress.parse(bad) }
        }
    }

    /// A name with addresses in both families, where nothing listens on the IPv6 one: Happy
    /// Eyeballs tries it (IPv6 first) and connects over IPv4; and the reverse.
    @Test(arguments: ["127.0.0.1", "::1"]) func happyEyeballsReachesTheFamilyThatAnswers(listening: String) async throws
    {
        try await RunningGateway.Setup(configure: { $0.host = listening }).run { running in
            var configuration = try running.configuration(.certificate(Fixtures.universal()), host: "localhost")
            configuration.fixedAddresses = [
                FixedAddress(host: "localhost", port: running.port, addresses: ["::1", "127.0.0.1"])
            ]
            let connection = try await GatewayConnection.connect(configuration)
            await connection.close()
            let report = connection.handshakeReport
            let expected = listening.contains(":") ? "[::1]:\(running.port)" : "127.0.0.1:\(running.port)"
            #expect(report.resolvedAddresses == ["[::1]:\(running.port)", "127.0.0.1:\(running.port)"])
            #expect(report.resolvedAddress == expected)
            #expect(report.addressFamily == (listening.contains(":") ? "ipv6" : "ipv4"))
        }
    }

    @Test func oneFamilyOnlyIsRefusedClearlyWhenTheNameHasNone() async throws {
        try await RunningGateway.with { running in
            var configuration = try running.configuration(.certificate(Fixtures.universal()), host: "localhost")
            configuration.fixedAddresses = [
                FixedAddress(host: "localhost", port: running.port, addresses: ["127.0.0.1"])
            ]
            configuration.addressFamily = .ipv6
            await #expect {
                try await GatewayConnection.connect(configuration)
            } throws: { error in
                guard let error = error as? GatewayError else { return false }
                return error.code == .noAddressForFamily && error.message.contains("localhost has no IPv6 address")
                    && error.message.contains("127.0.0.1")
            }
            configuration.addressFamily = .ipv4
            let connection = try await GatewayConnection.connect(configuration)
            await connection.close()
            #expect(connection.handshakeReport.resolvedAddress == "127.0.0.1:\(running.port)")
        }
    }

    /// Every address refusing names each of them.
    @Test func everyFamilyRefusingIsOneClearError() async throws {
        let port: Int = try await RunningGateway.with { $0.port }  // a port nothing listens on any more
        var configuration = try GatewayConfiguration(
            endpoint: .custom(host: "localhost", port: port),
            credential: .certificate(Fixtures.universal())
        )
        configuration.fixedAddresses = [FixedAddress(host: "localhost", port: port, addresses: ["::1", "127.0.0.1"])]
        await #expect {
            try await GatewayConnection.connect(configuration)
        } throws: { error in
            guard let error = error as? GatewayError else { return false }
            return error.code == .connectionRefused && error.message.contains("[::1]:\(port)")
                && error.message.contains("127.0.0.1:\(port)")
        }
    }

    /// The chain of a gateway whose CA is given ends at that CA: the report names it.
    @Test func handshakeNamesTheAnchor() async throws {
        try await RunningGateway.with { running in
            let connection = try await running.connect(.certificate(try Fixtures.universal()))
            await connection.close()
            let anchor = try #require(connection.handshakeReport.anchor)
            let ca = try #require(try ServerTrustEvaluator.loadCertificates(paths: [running.caFile]).first)
            #expect(anchor.subject == ca.subject.description)
            #expect(anchor.spkiSHA256 == TrustStore.spkiSHA256(ca))
            #expect(anchor.origin == .caFile)
            #expect(anchor.apnsRoot == nil)
        }
    }
}
