import CredentialFormats
import Foundation
import PushChecks
import PushStore
import TestSupport
import Testing

/// The library's one check over a store with many apps and a rotation in progress, against a
/// real Secret Service: the verdict per app, what is skipped and why, and the exit status.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["APNSCTL_INSIDE_SECRET_SERVICE"] == "1",
        "needs the private Secret Service of scripts/with-secret-service"
    )
)
struct CheckJudgingTests {
    static let shop = "com.example.shop"
    static let watch = "com.example.watch"
    static let dev = "com.example.dev"
    static let old = "com.example.old"

    /// | app | credentials |
    /// |---|---|
    /// | `com.example.shop` | `shop-2026` (both, 12 days) and its successor `shop-2027` (both, 400 days); `shop-sandbox` (sandbox, 300 days); `shop-production` (production, 500 days) |
    /// | `com.example.dev` | `dev-sandbox` (sandbox, 200 days) |
    /// | `com.example.old` | `old-expired` (both, expired) |
    /// | `com.example.watch` | `watch-key`, a token key recorded for it in both environments |
    /// | (none) | `untagged-key`, a token key recorded without topics or environments |
    final class Fixture: @unchecked Sendable {
        let folder: TemporaryFolder
        let store: CredentialStore

        init() async throws {
            folder = try TemporaryFolder()
            store = CredentialStore(root: URL(fileURLWithPath: folder.path("store")))
            let minted: [(alias: String, bundle: String, days: Int, environments: TestPKI.Environments)] = [
                ("shop-2026", CheckJudgingTests.shop, 12, [.sandbox, .production]),
                ("shop-2027", CheckJudgingTests.shop, 400, [.sandbox, .production]),
                ("shop-sandbox", CheckJudgingTests.shop, 300, [.sandbox]),
                ("shop-production", CheckJudgingTests.shop, 500, [.production]),
                ("dev-sandbox", CheckJudgingTests.dev, 200, [.sandbox]),
            ]
            for certificate in minted {
                let path = try TestPKI.mint(
                    in: folder,
                    name: certificate.alias,
                    bundle: certificate.bundle,
                    days: certificate.days,
                    environments: certificate.environments
                )
                // force: both certificates of a rotation, and several of one app, are kept on purpose.
                _ = try await store.importCertificate(
                    try CredentialFile.read(path: path),
                    alias: certificate.alias,
                    force: true
                )
            }
            // A certificate with its key in another file, as `import --key` takes it.
            _ = try await store.importCertificate(
                path: TestPaths.cert("identities/expired.pem"),
                keyFile: TestPaths.cert("identities/expired.key"),
                alias: "old-expired",
                force: true
            )
            _ = try await store.importTokenKey(
                path: TestPaths.cert("keys/AuthKey_ABC123DEFG.p8"),
                teamID: "ABCDE12345",
                topics: [CheckJudgingTests.watch],
                environments: [.sandbox, .production],
                alias: "watch-key"
            )
            let untagged = folder.path("AuthKey_UNTAGGED01.p8")
            try TestPKI.openssl([
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", untagged,
            ])
            _ = try await store.importTokenKey(
                try ProviderKey(path: untagged, teamID: "ABCDE12345"),
                topics: [],
                environments: [],
                alias: "untagged-key",
                source: untagged
            )
        }

        func check(_ request: CheckRequest) async throws -> CheckReport {
            try await CredentialCheck.run(request, in: store)
        }
    }

    static func verdict(_ report: CheckReport, _ app: String) -> AppVerdict? {
        (report.verdicts ?? report.storeVerdicts)?.first { $0.app == app }
    }

    static func skipped(_ verdict: AppVerdict?) -> [String: AppSelection.Skipped.Reason] {
        Dictionary(verdict?.skipped.map { ($0.credential, $0.reason) } ?? [], uniquingKeysWith: { first, _ in first })
    }

    @Test func oneVerdictPerAppInProduction() async throws {
        let fixture = try await Fixture()
        let report = try await fixture.check(
            CheckRequest(topics: [Self.shop, Self.watch, Self.dev, Self.old], environment: .production)
        )
        #expect(report.verdicts?.map(\.app) == [Self.shop, Self.watch, Self.dev, Self.old])

        // The rotation's successor counts, its predecessor is skipped, not judged.
        let shop = Self.verdict(report, Self.shop)
        #expect(shop?.state == .ready)
        #expect(shop?.fit == ["shop-2027", "shop-production"])
        #expect(shop?.unfit == ["untagged-key"])
        let shopSkipped = Self.skipped(shop)
        #expect(shopSkipped["shop-2026"] == .superseded)
        #expect(shop?.skipped.first { $0.credential == "shop-2026" }?.supersededBy == "shop-2027")
        #expect(shopSkipped["shop-sandbox"] == .otherEnvironment)
        #expect(shopSkipped["dev-sandbox"] == .otherApp)
        #expect(shopSkipped["watch-key"] == .otherApp)
        #expect(!report.results.contains { $0.name == "shop-2026" })

        // A token key recorded for the app, its key read from the Secret Service.
        let watch = Self.verdict(report, Self.watch)
        #expect(watch?.state == .ready)
        #expect(watch?.fit == ["watch-key"])
        let watchKey = report.results.first { $0.name == "watch-key" }
        #expect(watchKey?.findings.isEmpty == true)

        // Named, a development app has nothing for production; an expired certificate is not fit.
        let dev = Self.verdict(report, Self.dev)
        #expect(dev?.state == .notReady)
        #expect(Self.skipped(dev)["dev-sandbox"] == .otherEnvironment)
        let old = Self.verdict(report, Self.old)
        #expect(old?.state == .notReady)
        #expect(old?.unfit == ["old-expired", "untagged-key"])
        let expired = report.results.first { $0.name == "old-expired" }
        #expect(expired?.findings.map(\.code.rawValue) == ["expired"])
        // A key recorded without topics or environments may serve any app, but is never fit.
        let untagged = report.results.first { $0.name == "untagged-key" }
        #expect(untagged?.findings.map(\.code.rawValue) == ["token_metadata_incomplete"])

        #expect(report.outcome(failingOn: .warning) == .problemFound)
        #expect(report.outcome(failingOn: nil) == .problemFound, "per app, findings do not decide: the apps do")
    }

    @Test func sandboxAndOneAppReady() async throws {
        let fixture = try await Fixture()
        let report = try await fixture.check(CheckRequest(topics: [Self.shop, Self.dev], environment: .sandbox))
        let shop = Self.verdict(report, Self.shop)
        #expect(shop?.state == .ready)
        // In the sandbox the universal successor also supersedes the sandbox-only certificate.
        #expect(shop?.fit == ["shop-2027"])
        #expect(Self.skipped(shop)["shop-sandbox"] == .superseded)
        #expect(Self.skipped(shop)["shop-production"] == .otherEnvironment)
        #expect(Self.verdict(report, Self.dev)?.fit == ["dev-sandbox"])
        #expect(report.outcome(failingOn: .warning) == .allWell)
    }

    @Test func wholeStoreJudgesEveryCredentialStrictly() async throws {
        let fixture = try await Fixture()
        let report = try await fixture.check(CheckRequest(environment: .production))
        #expect(report.verdicts == nil)
        #expect(
            Set(report.results.map(\.name)) == [
                "shop-2026", "shop-2027", "shop-sandbox", "shop-production", "dev-sandbox", "old-expired", "watch-key",
                "untagged-key",
            ]
        )
        // The predecessor is judged on its own here: expiring within 30 days is a warning.
        #expect(report.results.first { $0.name == "shop-2026" }?.findings.map(\.code.rawValue) == ["expiring"])
        #expect(
            report.results.first { $0.name == "shop-sandbox" }?.findings.map(\.code.rawValue) == [
                "environment_mismatch"
            ]
        )
        #expect(Self.verdict(report, Self.shop)?.state == .ready)
        #expect(Self.verdict(report, Self.dev)?.state == .sandboxOnly)
        #expect(Self.verdict(report, Self.old)?.state == .notReady)
        #expect(Self.verdict(report, Self.watch)?.state == .ready)
        #expect(report.outcome(failingOn: .warning) == .problemFound)
        #expect(report.outcome(failingOn: .problem) == .problemFound)
        #expect(report.outcome(failingOn: nil) == .allWell)
        #expect(report.stored.count == 8)
    }

    @Test func aMissingKeyAndAnOrphanedSecret() async throws {
        let fixture = try await Fixture()
        let store = fixture.store
        let watchKey = try #require(try await store.credential(named: "watch-key"))
        #expect(try await store.secrets.remove(watchKey.secretItem(store: store.path)))
        let orphan = SecretItem(store: store.path, alias: "gone", kind: .tokenKey, identifier: "GONE000001")
        try await store.secrets.store(SecretBytes(Array("not a key".utf8)), for: orphan)

        let perApp = try await fixture.check(CheckRequest(topics: [Self.watch], environment: .production))
        #expect(perApp.verdicts?.first?.state == .notReady)
        #expect(perApp.results.first { $0.name == "watch-key" }?.findings.map(\.code.rawValue) == ["secret_missing"])
        #expect(!perApp.results.contains { $0.findings.contains { $0.code.rawValue == "orphaned_secret" } })

        let whole = try await fixture.check(CheckRequest())
        let orphaned = whole.results.filter { $0.findings.contains { $0.code.rawValue == "orphaned_secret" } }
        #expect(orphaned.map(\.name) == ["gone (orphaned secret)"])
        // Without the Secret Service asked, neither the key nor the orphan is looked for.
        let metadata = try await fixture.check(
            CheckRequest(topics: [Self.watch], environment: .production, skipSecrets: true)
        )
        #expect(metadata.verdicts?.first?.state == .ready)
    }

    @Test func aNamedCredentialIsJudgedOnItsOwn() async throws {
        let fixture = try await Fixture()
        let report = try await fixture.check(
            CheckRequest(credentials: ["shop-2026"], topics: [Self.shop], environment: .production)
        )
        #expect(report.verdicts == nil && report.storeVerdicts == nil)
        #expect(report.results.map(\.name) == ["shop-2026"])
        #expect(report.results.first?.expectedTopic == Self.shop)
        #expect(report.stored.map(\.alias) == ["shop-2026"])
        #expect(report.outcome(failingOn: .warning) == .problemFound)
        #expect(report.outcome(failingOn: .problem) == .allWell)

        let wrongApp = try await fixture.check(CheckRequest(credentials: ["dev-sandbox"], topics: [Self.shop]))
        #expect(wrongApp.results.first?.findings.map(\.code.rawValue) == ["topic_not_covered"])

        let unknown = await #expect(throws: CredentialError.self) {
            try await fixture.check(CheckRequest(credentials: ["no-such-alias"]))
        }
        #expect(unknown?.code == .aliasNotFound)
    }

    @Test func listingAndRenewals() async throws {
        let fixture = try await Fixture()
        let listing = try await fixture.store.listing()
        #expect(listing.entries.count == 8)
        #expect(listing.entries.allSatisfy { $0.damage == nil })
        #expect(!listing.needsAttention && !listing.isEmpty)
        // What `import --replace` names for each app: its latest certificate.
        let renewals = try await fixture.store.renewals()
        #expect(renewals.map(\.app) == [Self.dev, Self.old, Self.shop])
        #expect(renewals.map(\.alias) == ["dev-sandbox", "old-expired", "shop-production"])
    }

    @Test func importingAndRemovingByAlias() async throws {
        let fixture = try await Fixture()
        let store = fixture.store
        let missingTeam = await #expect(throws: CredentialError.self) {
            try await store.importTokenKey(path: TestPaths.cert("keys/AuthKey_ABC123DEFG.p8"), teamID: nil)
        }
        #expect(missingTeam?.code == .teamIDRequired)

        _ = try await store.createRequest(
            subject: RequestSubject(commonName: "Example Corp"),
            alias: "pending",
            path: fixture.folder.path("pending.csr")
        )
        guard case .request(let request, let removedSecret) = try await store.remove(named: "pending") else {
            Issue.record("a pending request was removed as a credential")
            return
        }
        #expect(request.alias == "pending" && removedSecret)
        guard case .credential(let removal) = try await store.remove(named: "shop-2026") else {
            Issue.record("a credential was removed as a pending request")
            return
        }
        #expect(removal.credential?.alias == "shop-2026" && removal.removedSecret)
        await #expect(try store.list().map(\.alias).contains("shop-2026") == false)
        #expect(try await store.pendingRequests().isEmpty)
    }

    @Test func anEmptyStoreHasNothingToCheck() async throws {
        let folder = try TemporaryFolder()
        let store = CredentialStore(root: URL(fileURLWithPath: folder.path("store")))
        let report = try await CredentialCheck.run(CheckRequest(), in: store)
        #expect(report.nothingToCheck)
        #expect(report.outcome(failingOn: .warning) == .couldNotCheck)
    }
}
