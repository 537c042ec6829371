import Foundation
import NIOPosix
import Testing

@testable import PushMonitoring
@testable import PushStore

/// The exporter's bounds that need no server: the probe cache's size, the topics a probe may
/// name, bcrypt verification through the C library, and the warning for an exposed address.
struct ExporterBoundsUnitTests {
    @Test func theCacheNeverHoldsMoreThanItsCapacity() {
        var cache = BoundedCache<String, Int>(capacity: 16)
        for index in 0..<10_000 {
            cache["key\(index)"] = index
            #expect(cache.count <= 16)
        }
        #expect(cache.count == 16)
        #expect(cache["key9999"] == 9999, "the newest entry is kept")
        #expect(cache["key0"] == nil, "the oldest is forgotten")
        // Storing again an existing key replaces it without forgetting another.
        cache["key9990"] = -1
        #expect(cache.count == 16 && cache["key9990"] == -1 && cache["key9984"] == 9984)
        cache.retain { $0.hasSuffix("9") }
        #expect(cache.count == 2, "key9989 and key9999")
    }

    @Test func theProbeCacheHoldsOneResultPerCredentialAndEnvironmentWithinItsBound() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("probe-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let service = ProbeService(
            store: CredentialStore(root: folder),
            settings: ProbeSettings(minimumInterval: 3600, cacheCapacity: 8)
        )
        // Aliases the store does not hold: each probe fails at setup, without a connection,
        // and is remembered; many distinct ones never grow the cache past its bound.
        let aliases = (0..<40).map { "credential\($0)" }
        for alias in aliases {
            for environment in PushEnvironment.allCases {
                _ = await service.probe(
                    ProbeTarget(credential: alias, environment: environment, topic: "com.example.\(alias)"),
                    stored: Set(aliases)
                )
                #expect(await service.cachedResults <= 8)
            }
        }
        #expect(await service.cachedResults == 8)
        // One credential and environment, another topic, within the interval: the last answer.
        let again = await service.probe(
            ProbeTarget(credential: "credential39", environment: .production, topic: "com.example.other"),
            stored: Set(aliases)
        )
        #expect(again.cached)
        // Credentials no longer in the store are forgotten.
        _ = await service.probe(ProbeTarget(credential: "credential0", environment: .sandbox), stored: ["credential0"])
        #expect(await service.cachedResults == 1)
    }

    @Test func aProbeMayNameTheCredentialsTopicsAndTheirPushTypeSuffixesOnly() {
        let credential = StoredCredential(
            alias: "myapp",
            kind: .certificate,
            topics: ["com.example.app"],
            environments: [.production],
            importedAt: Date(),
            secret: .privateKey
        )
        let allowed = ProbeService.allowedTopics(of: credential)
        for topic in [
            "com.example.app", "com.example.app.voip", "com.example.app.complication",
            "com.example.app.push-type.liveactivity", "com.example.app.voip-ptt",
        ] {
            #expect(allowed.contains(topic), "\(topic)")
        }
        for topic in ["com.example.other", "com.example.app.x", "com.example", "com.example.app\r\nX: 1"] {
            #expect(!allowed.contains(topic), "\(topic)")
        }
        #expect(allowed.count == Set(allowed).count)
    }

    @Test func bcryptHashesAreVerifiedByTheCLibrary() throws {
        // Made by htpasswd -nbB (Apache's bcrypt), $2y$, and by Python's bcrypt, $2b$: "secret-pw".
        let users = [
            "alice": "$2y$05$obbTdYIO.wlwcOXPUSLb2u0KdRm8/2NUWjvFL2lFT5ROvK0x9hUWi",
            "bob": "$2b$12$OR2yLtOrdcp725yN18xYB.c/06ENd1HPfGw7ez0j6jvzXUlccHTu6",
        ]
        let auth = BasicAuth(users: users)
        func basic(_ text: String) -> String { "Basic " + Data(text.utf8).base64EncodedString() }
        #expect(BasicAuth.isUsableHash(users["alice"]!))
        #expect(!BasicAuth.isUsableHash("secret-pw"))
        #expect(!BasicAuth.isUsableHash("$2y$05$short"))
        #expect(auth.accepts(basic("alice:secret-pw")))
        #expect(!auth.accepts(basic("alice:secret-pX")))
        #expect(!auth.accepts(basic("carol:secret-pw")), "an unknown user")
        #expect(!auth.accepts(nil))
        #expect(!auth.accepts("Bearer x"))
        #expect(!auth.accepts("Basic %%%"))
        #expect(BasicAuth.constantTimeEqual("abc", "abc"))
        #expect(!BasicAuth.constantTimeEqual("abc", "abd") && !BasicAuth.constantTimeEqual("abc", "abcd"))
    }

    @Test func anAddressBeyondLoopbackWithoutAuthenticationIsWarnedAbout() {
        let store = CredentialStore(root: URL(fileURLWithPath: "/nonexistent-store"))
        func configuration(_ host: String) -> MetricsExporter.Configuration {
            MetricsExporter.Configuration(host: host, port: 0, check: StoreCheck(store: store), probe: ProbeSettings())
        }
        #expect(configuration("127.0.0.1").exposureWarning == nil)
        #expect(configuration("::1").exposureWarning == nil)
        let warning = configuration("0.0.0.0").exposureWarning ?? ""
        #expect(warning.contains("0.0.0.0") && warning.contains("/metrics") && warning.contains("/probe"), "\(warning)")
        #expect(warning.contains("plain HTTP"))
    }
}
