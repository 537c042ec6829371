import CredentialFormats
import Foundation
import PushChecks
import TestSupport
import Testing

/// Every readable fixture in certs/ reports what certs/mint.sh recorded (openssl's view of the
/// same files: fingerprints, serials and dates were computed by the openssl CLI, not by us).
struct FixtureInspectionTests {
    static func read(_ entry: Manifest.Entry) throws -> CredentialFile {
        let password = entry.password.map { SecretBytes($0) }
        return try CredentialFile.read(
            path: Paths.cert(entry.path),
            password: password.map(PasswordSource.fixed) ?? .none
        )
    }

    @Test(arguments: Manifest.certificateFixtures)
    func reportsWhatOpenSSLSees(_ entry: Manifest.Entry) throws {
        let file = try Self.read(entry)
        let certificate = file.certificate

        #expect(certificate.sha256 == entry.sha256)
        #expect(certificate.sha1 == entry.sha1)
        #expect(certificate.serialNumber == entry.serial)
        #expect(certificate.notBefore == entry.notBefore)
        #expect(certificate.notAfter == entry.notAfter)
        #expect(certificate.environments.map(\.rawValue) == (entry.environments ?? []))
        if let source = entry.environmentSource {
            let expected: EnvironmentSource = source == "extension" ? .extensions : source == "cn" ? .commonName : .none
            #expect(certificate.environmentSource == expected)
        }
        #expect(certificate.topics.map { Manifest.Topic(topic: $0.name, kinds: $0.kinds) } == (entry.topics ?? []))
        if let bundle = entry.bundleId { #expect(certificate.bundleID == bundle) }
        if let team = entry.teamID { #expect(certificate.teamID == team) }
        if let isPush = entry.pushCertificate { #expect(certificate.isPushCertificate == isPush) }

        #expect((file.privateKey != nil) == (entry.hasKey ?? false))
        if let matches = entry.keyMatches { #expect(file.privateKey?.matchesCertificate == matches) }
        #expect(file.chain.count == (entry.chainCount ?? 0))
    }

    /// Status is judged at the moment the fixtures were minted, so it does not drift as the
    /// committed fixtures age.
    @Test(arguments: [
        ("p12/openssl3-default.p12", ValidityStatus.valid),
        ("p12/keychain-legacy.p12", .valid),
        ("p12/expired.p12", .expired),
        ("p12/expiring.p12", .expiring),
        ("identities/expired.pem", .expired),
        ("identities/expiring.pem", .expiring),
    ])
    func statusAtMintTime(_ path: String, _ expected: ValidityStatus) throws {
        let file = try Self.read(Manifest.entry(path))
        let mintedAt = Manifest.shared.mintedAt
        #expect(file.certificate.status(at: mintedAt, warnDays: 30) == expected)
        // A warning window shorter than the days left turns "expiring" back into "valid".
        if expected == .expiring {
            #expect(file.certificate.status(at: mintedAt, warnDays: 5) == .valid)
        }
        // Before its start date every certificate is not yet valid.
        #expect(
            file.certificate.status(at: file.certificate.notBefore.addingTimeInterval(-1), warnDays: 30) == .notYetValid
        )
    }

    @Test func keychainLegacyBundleIsDescribedAsLegacy() throws {
        let file = try Self.read(Manifest.entry("p12/keychain-legacy.p12"))
        #expect(file.format == .pkcs12)
        #expect(file.protection?.certificates == "RC2-40 (PBE-SHA1)")
        #expect(file.protection?.key == "3DES (PBE-SHA1)")
        #expect(file.protection?.mac == "SHA-1")
        #expect(file.protection?.usesLegacyAlgorithms == true)
    }

    @Test func modernBundleIsDescribedAsAES() throws {
        let file = try Self.read(Manifest.entry("p12/openssl3-default.p12"))
        #expect(file.protection?.certificates == "AES-256-CBC (PBES2, PBKDF2-HMAC-SHA256)")
        #expect(file.protection?.mac == "SHA-256")
        #expect(file.protection?.usesLegacyAlgorithms == false)
        #expect(file.chain.first?.subject.contains("apnsctl TEST Worldwide Developer Relations CA") == true)
    }

    @Test func emptyPasswordBundleOpensWithoutAsking() throws {
        let asked = Counter()
        let file = try CredentialFile.read(
            path: Paths.cert("p12/empty-password.p12"),
            password: PasswordSource { _ in
                asked.increment()
                return nil
            }
        )
        #expect(asked.value == 0)
        #expect(file.privateKey?.matchesCertificate == true)
    }

    @Test func mismatchedKeyIsFoundAndFlagged() throws {
        let file = try Self.read(Manifest.entry("p12/mismatched-key.p12"))
        #expect(file.privateKey?.matchesCertificate == false)
        let codes = CertificateFindings.evaluate(file, at: Manifest.shared.mintedAt, warnDays: 30).map(\.code.rawValue)
        #expect(codes == ["key_mismatch"])
    }

    @Test func notAPushCertificateIsInspectedAndFlagged() throws {
        let file = try CredentialFile.read(path: Paths.cert("identities/other.pem"))
        #expect(!file.certificate.isPushCertificate)
        #expect(file.certificate.kind == .notPush)
        let findings = CertificateFindings.evaluate(file, at: Manifest.shared.mintedAt, warnDays: 30)
        #expect(findings.map(\.code.rawValue) == ["not_push_certificate"])
        #expect(findings.first?.severity == .warning)
    }

    @Test func commonNameFallbackOnlyWithoutExtensions() throws {
        let legacy = try CredentialFile.read(path: Paths.cert("identities/cn-only-sandbox.pem")).certificate
        #expect(legacy.environments == [.sandbox])
        #expect(legacy.environmentSource == .commonName)
        // The universal fixture's CN prefix would also say both, but its extensions decide.
        let voip = try CredentialFile.read(path: Paths.cert("identities/voip.pem")).certificate
        #expect(voip.kind == .voip)
        #expect(voip.environments.isEmpty)
        #expect(voip.environmentSource == EnvironmentSource.none)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
