import Foundation
import TestSupport
import Testing

/// A real team's store, shared by the suites that judge many apps at once: 11 credentials over
/// 4 apps, with a rotation's two certificates side by side, a development-only app, token keys
/// with and without topics, an expired certificate, and long real-looking aliases and topics.
///
/// | app | credentials |
/// |---|---|
/// | `com.company.product.notificationservice` | universal (400 days), its expiring universal predecessor (12 days), a sandbox-only CI certificate (500 days) |
/// | `com.company.internal.qa-dashboard-development` | sandbox only: a certificate (300 days) and its predecessor (20 days) |
/// | `com.company.product.companion-watchapp` | a token key recorded for it (both environments), a production certificate, a sandbox certificate |
/// | `com.example.old` | an expired universal certificate, a production certificate (300 days) |
/// | (none) | a token key recorded with no topics or environments |
///
/// The certificates but the expired one are minted by `gateway mint-identity`, so the local
/// gateway started by ``gateway(_:)`` trusts them; both token keys are known to it.
final class TeamStore: @unchecked Sendable {
    static let password = "team-fixture-pass"
    static let product = "com.company.product.notificationservice"
    static let qa = "com.company.internal.qa-dashboard-development"
    static let companion = "com.company.product.companion-watchapp"
    static let legacy = "com.example.old"
    static let apps = [product, qa, companion, legacy]

    /// Aliases by role.
    static let productUniversal = "\(product)-universal-2027"
    static let productPredecessor = "\(product)-universal-2026"
    static let productSandbox = "\(product)-sandbox-ci"
    static let qaSandbox = "\(qa)-sandbox-2027"
    static let qaPredecessor = "\(qa)-sandbox-2026"
    static let companionKey = "team-ABCDE12345-authkey-ABC123DEFG-companion"
    static let companionProduction = "\(companion)-production"
    static let companionSandbox = "\(companion)-sandbox"
    static let legacyExpired = "\(legacy)-universal-expired"
    static let legacyProduction = "\(legacy)-production"
    static let untaggedKey = "team-ABCDE12345-authkey-UNTAGGED01"

    static let aliases = [
        productUniversal, productPredecessor, productSandbox, qaSandbox, qaPredecessor, companionKey,
        companionProduction, companionSandbox, legacyExpired, legacyProduction, untaggedKey,
    ]

    let store: StoreCommandTests.Store
    let folder: TemporaryFolder
    var clientCA: String { folder.path("ca/client-ca.pem") }
    var untaggedPublicKey: String { folder.path("AuthKey_UNTAGGED01.pub.pem") }

    init() throws {
        store = try StoreCommandTests.Store()
        folder = try TemporaryFolder()
        let certificates: [(alias: String, bundle: String, environment: String, days: Int)] = [
            (Self.productUniversal, Self.product, "both", 400),
            (Self.productPredecessor, Self.product, "both", 12),
            (Self.productSandbox, Self.product, "sandbox", 500),
            (Self.qaSandbox, Self.qa, "sandbox", 300),
            (Self.qaPredecessor, Self.qa, "sandbox", 20),
            (Self.companionProduction, Self.companion, "production", 200),
            (Self.companionSandbox, Self.companion, "sandbox", 100),
            (Self.legacyProduction, Self.legacy, "production", 300),
        ]
        for certificate in certificates {
            let file = folder.path("\(certificate.alias).p12")
            let minted = try CLI.run(
                [
                    "gateway", "mint-identity", "--topic", certificate.bundle, "--environment", certificate.environment,
                    "--days", String(certificate.days), "--ca-dir", folder.path("ca"), "--out", file,
                    "--password-env", "MINT",
                ],
                environment: ["MINT": Self.password]
            )
            guard minted.status == 0 else { throw CLIError(message: "mint-identity failed: \(minted.stderr)") }
            // --force: both certificates of a rotation are kept on purpose.
            try importing(
                [file, "--alias", certificate.alias, "--password-env", "MINT", "--force"],
                environment: ["MINT": Self.password]
            )
        }
        try importing([
            CLI.cert("identities/expired.pem"), "--key", CLI.cert("identities/expired.key"), "--alias",
            Self.legacyExpired, "--force",
        ])
        try importing([
            CLI.cert("keys/AuthKey_ABC123DEFG.p8"), "--team-id", "ABCDE12345", "--topic", Self.companion,
            "--environment", "both", "--alias", Self.companionKey, "--force",
        ])
        let untagged = folder.path("AuthKey_UNTAGGED01.p8")
        try TestPKI.tokenKey(at: untagged, publicKey: untaggedPublicKey)
        try importing([untagged, "--team-id", "ABCDE12345", "--alias", Self.untaggedKey, "--force"])
    }

    private func importing(_ arguments: [String], environment: [String: String] = [:]) throws {
        let result = try store.run(["import"] + arguments, environment: environment)
        guard result.status == 0 else {
            throw CLIError(message: "import \(arguments.first ?? "") failed (\(result.status)): \(result.stderr)")
        }
    }

    /// A local gateway for one environment that trusts the fixture's certificates and token keys.
    func gateway(_ environment: String) throws -> GatewayProcess {
        try GatewayProcess(
            folder,
            name: "team-\(environment)-\(UUID().uuidString.prefix(8))",
            arguments: [
                "--environment", environment, "--client-ca", clientCA, "--token-key",
                "ABC123DEFG=\(CLI.cert("keys/AuthKey_ABC123DEFG.pub.pem"))", "--token-key",
                "UNTAGGED01=\(untaggedPublicKey)", "--team-id", "ABCDE12345",
            ]
        )
    }

    func run(_ arguments: [String]) throws -> CLI.Result { try store.run(arguments) }

    /// The per-app verdicts of a `check` or `preflight` JSON report, by topic.
    static func verdicts(_ report: [String: Any]) -> [String: [String: Any]] {
        var byApp: [String: [String: Any]] = [:]
        for app in report["apps"] as? [[String: Any]] ?? [] {
            if let topic = app["topic"] as? String { byApp[topic] = app }
        }
        return byApp
    }
}
