import CredentialFormats
import Foundation
import PushGateway
import PushStore
import TestSupport
import Testing

/// Proxy resolution, the environment choice and the configuration built from plain settings.
struct ProxySettingsTests {
    @Test func explicitProxyWinsAndSaysSo() throws {
        let proxy = try ProxySettings.resolve(
            explicit: "http://proxy.example.com:3128",
            for: "api.push.apple.com",
            environment: ["HTTPS_PROXY": "http://other.example.com:8080"]
        )
        #expect(proxy?.url.host == "proxy.example.com")
        #expect(proxy?.source == .explicit)
        // Even for loopback: an explicit proxy is used as given.
        #expect(
            try ProxySettings.resolve(explicit: "http://proxy:1", for: "127.0.0.1", environment: [:])?.source
                == .explicit
        )
    }

    @Test func environmentVariableIsRecordedAsTheSource() throws {
        let upper = try ProxySettings.resolve(
            explicit: nil,
            for: "api.push.apple.com",
            environment: ["HTTPS_PROXY": "proxy.example.com:3128"]
        )
        #expect(upper?.url.absoluteString == "http://proxy.example.com:3128")
        #expect(upper?.source == .environment(variable: "HTTPS_PROXY"))
        #expect(upper?.source.description == "HTTPS_PROXY")
        let lower = try ProxySettings.resolve(
            explicit: nil,
            for: "api.push.apple.com",
            environment: ["https_proxy": "http://p:1"]
        )
        #expect(lower?.source == .environment(variable: "https_proxy"))
        // HTTPS_PROXY set but empty means no proxy, whatever https_proxy says.
        #expect(
            try ProxySettings.resolve(
                explicit: nil,
                for: "api.push.apple.com",
                environment: ["HTTPS_PROXY": "", "https_proxy": "http://p:1"]
            ) == nil
        )
        #expect(try ProxySettings.resolve(explicit: nil, for: "api.push.apple.com", environment: [:]) == nil)
    }

    @Test(arguments: ["localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]", "LOCALHOST"])
    func loopbackBypassesTheEnvironmentProxy(_ host: String) throws {
        #expect(
            try ProxySettings.resolve(explicit: nil, for: host, environment: ["HTTPS_PROXY": "http://proxy:3128"])
                == nil
        )
    }

    @Test func noProxyRules() throws {
        func proxied(_ host: String, _ noProxy: String, key: String = "NO_PROXY") throws -> Bool {
            try ProxySettings.resolve(
                explicit: nil,
                for: host,
                environment: ["HTTPS_PROXY": "http://proxy:3128", key: noProxy]
            ) != nil
        }
        #expect(try !proxied("api.push.apple.com", "*"))
        #expect(try !proxied("api.push.apple.com", "apple.com"))
        #expect(try !proxied("api.push.apple.com", ".push.apple.com"))
        #expect(try !proxied("API.Push.Apple.com", " example.org , push.apple.com "))
        #expect(try !proxied("api.push.apple.com", "apple.com", key: "no_proxy"))
        #expect(try proxied("api.push.apple.com", "example.org"))
        // A suffix matches at a dot only.
        #expect(try proxied("api.push.apple.com", "le.com"))
    }

    @Test func badProxyURLIsInvalidProxyNamingItsSource() throws {
        let fromVariable = #expect(throws: GatewayError.self) {
            try ProxySettings.resolve(explicit: nil, for: "api.push.apple.com", environment: ["https_proxy": "http://"])
        }
        #expect(fromVariable?.code == .invalidProxy)
        #expect(fromVariable?.message.contains("https_proxy") == true)
        let explicit = #expect(throws: GatewayError.self) {
            try ProxySettings.resolve(explicit: "not a url", for: "api.push.apple.com", environment: [:])
        }
        #expect(explicit?.code == .invalidProxy)
        // A broken variable does not matter for a host that bypasses it.
        #expect(
            try ProxySettings.resolve(explicit: nil, for: "localhost", environment: ["HTTPS_PROXY": "http://"]) == nil
        )
    }
}

struct ConnectionSettingsTests {
    static func credential(_ environments: [PushEnvironment]) throws -> LoadedCredential {
        LoadedCredential(
            name: "key",
            key: try Fixtures.providerKey(),
            environments: environments,
            topics: ["com.example.app"]
        )
    }

    @Test func environmentChoice() throws {
        let production = try Self.credential([.production])
        let asked = ConnectionSettings(environment: .sandbox).chooseEnvironment(for: production)
        #expect(asked.environment == .sandbox && asked.reason == .given)
        let own = ConnectionSettings().chooseEnvironment(for: production)
        #expect(own.environment == .production && own.reason == .credentialOnly)
        let both = ConnectionSettings().chooseEnvironment(for: try Self.credential([.sandbox, .production]))
        #expect(both.environment == .sandbox && both.reason == .defaultSandbox)
        #expect(both.credentialDescription == "both")
        let unknown = ConnectionSettings().chooseEnvironment(for: try Self.credential([]))
        #expect(unknown.reason == .defaultSandbox && unknown.credentialDescription == "no known environment")
    }

    @Test(arguments: [0.5, 10, 45])
    func timeoutBoundsEveryPhaseAndEachRequest(_ timeout: Double) throws {
        let plan = try ConnectionSettings(timeout: timeout, processEnvironment: [:])
            .configuration(for: try Self.credential([.production]), environment: .production)
        let timeouts = plan.configuration.timeouts
        #expect(
            [timeouts.dns, timeouts.connect, timeouts.tls, timeouts.http2, timeouts.request]
                == Array(repeating: timeout, count: 5)
        )
    }

    @Test func configurationFromPlainValues() throws {
        let settings = ConnectionSettings(
            port: 2197,
            caFiles: ["/tmp/a.pem", "/tmp/b.pem"],
            processEnvironment: ["HTTPS_PROXY": "http://proxy.example.com:3128"]
        )
        let plan = try settings.configuration(for: try Self.credential([.production]), environment: .production)
        #expect(plan.configuration.endpoint == Endpoint(host: "api.push.apple.com", port: 2197))
        #expect(plan.configuration.caFiles == ["/tmp/a.pem", "/tmp/b.pem"])
        #expect(plan.configuration.proxy?.host == "proxy.example.com")
        #expect(plan.proxy?.source == .environment(variable: "HTTPS_PROXY"))
        #expect(plan.notices.isEmpty)
        if case .token(let key) = plan.configuration.credential {
            #expect(key.teamID == Fixtures.teamID)
        } else {
            Issue.record("not a token credential")
        }

        let legacy = try ConnectionSettings(gateway: "gateway.push.apple.com:2195", processEnvironment: [:])
            .configuration(for: try Self.credential([.production]), environment: .production)
        #expect(legacy.configuration.endpoint == .production)
        #expect(legacy.notices.count == 1 && legacy.proxy == nil)

        let local = try ConnectionSettings(
            gateway: "127.0.0.1:8443",
            processEnvironment: ["HTTPS_PROXY": "http://proxy:1"]
        )
        .configuration(for: try Self.credential([]), environment: .sandbox)
        #expect(local.proxy == nil && local.configuration.proxy == nil)

        #expect(throws: GatewayError.self) {
            try ConnectionSettings(gateway: "api.sandbox.push.apple.com").configuration(
                for: try Self.credential([]),
                environment: .production
            )
        }
    }
}
