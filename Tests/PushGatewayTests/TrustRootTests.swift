import Foundation
import PushStore
import TestSupport
import Testing
import X509

@testable import PushGateway

/// The table of APNs' roots against the real certificates, and the trust-store check on real
/// bundles: Debian's ca-certificates, and one built here without USERTrust.
@Suite(.timeLimit(.minutes(2))) struct TrustRootTests {
    /// Debian's bundle (the ca-certificates package), the one the system store is read from.
    static let debianBundle = "/etc/ssl/certs/ca-certificates.crt"
    static let aaaFixture = Fixtures.cert("roots/aaa-certificate-services.pem")

    static func root(_ name: String) throws -> APNsTrustRoot {
        try #require(APNsTrustRoots.table.first { $0.name == name })
    }

    @Test func tableMatchesTheCertificateInDebiansBundle() throws {
        let root = try Self.root("USERTrust RSA Certification Authority")
        let bundle = try ServerTrustEvaluator.loadCertificates(paths: [Self.debianBundle])
        let certificate = try #require(
            bundle.first { $0.subject.description.contains("CN=USERTrust RSA Certification Authority") },
            "Debian's ca-certificates carries USERTrust RSA"
        )
        #expect(certificate.subject.description == root.subject)
        #expect(TrustStore.spkiSHA256(certificate) == root.spkiSHA256)
        #expect(TrustStore.holds(root, in: bundle))
        // Debian 12 dropped the previous root.
        #expect(!TrustStore.holds(try Self.root("AAA Certificate Services"), in: bundle))
    }

    @Test func previousRootMatchesItsCertificate() throws {
        let root = try Self.root("AAA Certificate Services")
        let certificate = try #require(try ServerTrustEvaluator.loadCertificates(paths: [Self.aaaFixture]).first)
        #expect(certificate.subject.description == root.subject)
        #expect(TrustStore.spkiSHA256(certificate) == root.spkiSHA256)
    }

    @Test func eachEnvironmentMovedOnItsOwnDate() throws {
        let aaa = try Self.root("AAA Certificate Services")
        let usertrust = try Self.root("USERTrust RSA Certification Authority")
        let between = APNsTrustRoots.day(2025, 2, 1)
        #expect(APNsTrustRoots.current(.sandbox, at: between) == usertrust)
        #expect(APNsTrustRoots.current(.production, at: between) == aaa)
        #expect(APNsTrustRoots.upcoming(.production, at: between) == usertrust)
        #expect(APNsTrustRoots.upcoming(.sandbox, at: between) == nil)
        #expect(APNsTrustRoots.current(.production, at: APNsTrustRoots.day(2026, 1, 1)) == usertrust)
        #expect(APNsTrustRoots.current(.sandbox, at: APNsTrustRoots.day(2020, 1, 1)) == nil)
    }

    /// The system store as the check reads it is the one the handshake trusts: the root the
    /// check finds there is a trust anchor for swift-certificates' system store.
    @Test func checkReadsTheStoreTheHandshakeTrusts() async throws {
        let store = try TrustStore.load()
        #expect(store.base == .system)
        let root = try Self.root("USERTrust RSA Certification Authority")
        let found = try #require(store.candidates.first { TrustStore.spkiSHA256($0) == root.spkiSHA256 })
        var verifier = Verifier(rootCertificates: CertificateStore.systemTrustRoots) { RFC5280Policy() }
        let result = await verifier.validate(leaf: found, intermediates: CertificateStore())
        guard case .validCertificate = result else {
            Issue.record("the root found by the check is not in swift-certificates' system store: \(result)")
            return
        }
        let check = TrustStoreCheck.judge(store, environments: PushEnvironment.allCases, at: Date())
        #expect(check.ready)
        #expect(check.problem == nil)
    }

    @Test func bundleWithoutUSERTrustIsNotReadyAndSaysWhatToAdd() throws {
        let bundle = try Self.bundleWithoutUSERTrust()
        let check = try TrustStoreCheck.run(caBundle: bundle)
        #expect(!check.ready)
        #expect(
            check.environments.allSatisfy { !$0.ready && $0.currentRoot == "USERTrust RSA Certification Authority" }
        )
        let problem = try #require(check.problem)
        #expect(problem.contains("USERTrust RSA Certification Authority"))
        #expect(problem.contains(bundle))
        #expect(check.fix?.contains(bundle) == true)
        // The previous root is there and named as such.
        #expect(check.roots.first { $0.name == "AAA Certificate Services" }?.present == true)
        #expect(check.roots.first { $0.name == "AAA Certificate Services" }?.role == .previous)

        // Adding the root as a CA file on top makes it ready, as --ca does for a connection.
        let withCA = try TrustStoreCheck.run(
            caBundle: bundle,
            caFiles: ["/etc/ssl/certs/USERTrust_RSA_Certification_Authority.pem"]
        )
        #expect(withCA.ready)
    }

    /// Before 24 February 2025 a store with only the new root was ready for production but was
    /// warned; one with only the old root was ready for production, not for sandbox.
    @Test func duringTheMoveBothRootsWereNeeded() throws {
        let between = APNsTrustRoots.day(2025, 2, 1)
        let old = try TrustStoreCheck.run(caBundle: try Self.bundleWithoutUSERTrust(), at: between)
        #expect(old.environments.first { $0.environment == .production }?.ready == true)
        #expect(old.environments.first { $0.environment == .production }?.upcomingRootPresent == false)
        #expect(old.environments.first { $0.environment == .sandbox }?.ready == false)
        let production = try TrustStoreCheck.run(
            environments: [.production],
            caBundle: try Self.bundleWithoutUSERTrust(),
            at: between
        )
        #expect(production.ready)
        #expect(production.warning?.contains("USERTrust RSA Certification Authority") == true)
    }

    @Test func unreadableBundleIsNamed() throws {
        let missing = try Fixtures.temporaryPath("no-such-bundle.pem")
        #expect {
            try TrustStoreCheck.run(caBundle: missing)
        } throws: { error in
            guard let error = error as? GatewayError else { return false }
            return error.code == .caFileUnreadable && error.message.contains(missing)
                && error.message.contains("CA bundle")
        }
    }

    /// Debian's bundle without USERTrust RSA, with AAA Certificate Services: a trust store of 2021.
    static func bundleWithoutUSERTrust() throws -> String {
        let text = try String(contentsOfFile: debianBundle, encoding: .utf8)
        let usertrust = try String(
            contentsOfFile: "/etc/ssl/certs/USERTrust_RSA_Certification_Authority.pem",
            encoding: .utf8
        )
        let blocks = text.components(separatedBy: "-----END CERTIFICATE-----").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }.filter { !$0.isEmpty }
        let removed = usertrust.replacingOccurrences(of: "-----END CERTIFICATE-----", with: "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let kept = blocks.filter { $0 != removed }
        #expect(kept.count == blocks.count - 1, "USERTrust RSA was found once in Debian's bundle")
        let aaa = try String(contentsOfFile: aaaFixture, encoding: .utf8)
        let bundle = kept.map { $0 + "\n-----END CERTIFICATE-----\n" }.joined() + aaa
        return try Fixtures.temporaryFile("bundle-without-usertrust.pem", contents: bundle)
    }
}
