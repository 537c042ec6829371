import CredentialFormats
import Foundation
import PushGateway
import PushStore

/// What a preflight is asked about.
public enum PreflightTarget: Sendable {
    /// These credentials (aliases or files), each for the check's topic.
    case credentials([String])
    /// Every app of the store, or the apps of these topics: one verdict per app, from the
    /// stored credentials that could serve it.
    case apps(topics: [String])
}

/// A whole preflight: every credential's report and, for apps, their verdicts.
public struct PreflightRun: Sendable {
    /// One per probed or judged credential, in the order checked.
    public var reports: [PreflightReport]
    /// One per app; nil when credentials were named.
    public var apps: [AppVerdict]?
    /// Whether the trust store holds the root APNs chains to (nil for a gateway not Apple's).
    public var trustStore: TrustStoreCheck?

    /// All well when every app or credential is ready; a problem when one is not; could not
    /// check when one could not be checked (and none was found unfit).
    public var outcome: CheckOutcome {
        // A trust store without APNs' root makes every connection to APNs fail: not ready.
        if trustStore?.ready == false { return .problemFound }
        if let apps { return AppVerdict.outcome(apps) }
        let fitness = reports.map(\.fitness)
        return fitness.contains(.unfit) ? .problemFound : fitness.contains(.couldNotCheck) ? .couldNotCheck : .allWell
    }
}

extension PreflightCheck {
    /// One step of a run, as it completes: an app judged, or a named credential checked.
    public enum Progress: Sendable {
        case app(AppPreflight)
        case credential(PreflightReport)
        /// The trust store checked, before any credential (only for Apple's gateways).
        case trustStore(TrustStoreCheck)
    }

    /// Preflights `target`: the named credentials one after the other, or each app of `store`
    /// from its candidates. `each` hears every step as it completes, for a display that shows
    /// progress; the run's result holds them all.
    public func run(
        _ target: PreflightTarget,
        store: CredentialStore,
        loader: CredentialLoader,
        each: (Progress) -> Void = { _ in }
    ) async throws -> PreflightRun {
        let trust = try trustStoreCheck()
        if let trust { each(.trustStore(trust)) }
        var run = try await credentialsRun(target, store: store, loader: loader, each: each)
        run.trustStore = trust
        return run
    }

    private func credentialsRun(
        _ target: PreflightTarget,
        store: CredentialStore,
        loader: CredentialLoader,
        each: (Progress) -> Void
    ) async throws -> PreflightRun {
        switch target {
        case .credentials(let names):
            var reports: [PreflightReport] = []
            for name in names {
                let report = await check(name, loader: loader)
                reports.append(report)
                each(.credential(report))
            }
            return PreflightRun(reports: reports, apps: nil)
        case .apps(let topics):
            let stored = try await store.list()
            if stored.isEmpty {
                throw CredentialError.aliasNotFound(
                    nil,
                    "There is no credential to check: the store is empty and none was named.",
                    hint: "Import a credential, or name credential files.",
                    remedy: .credentialStored(file: nil)
                )
            }
            var run = PreflightRun(reports: [], apps: [])
            for selection in AppSelection.select(topics: topics, environment: environment, stored: stored) {
                let app = await self.run(selection, loader: loader)
                run.reports += app.reports
                run.apps?.append(app.verdict)
                each(.app(app))
            }
            return run
        }
    }
}
