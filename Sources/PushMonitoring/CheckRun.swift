import Foundation
import PushChecks
import PushStore

/// One check of a store (or of files), as the metrics publish it: what was judged, and whether
/// the check could be made at all.
public struct CheckRun: Sendable {
    public var date: Date
    public var results: [CheckResult]
    /// Why the store could not be read, when it could not: the run then has no results.
    public var failure: String?
    /// Whether the Secret Service was asked for the keys (not with `--skip-secrets`).
    public var secretsAsked: Bool
    /// The per-app verdict: ready when at least one credential for the app and environment is fit.
    public var apps: [AppReadiness]
    /// The store as x509-certificate-exporter's source; nil for files checked by name.
    public var source: X509Source?
    /// The store's index as the check read it (empty for files checked by name).
    public var stored: [StoredCredential] = []
    /// Each stored certificate's file, by alias, also for one that could not be read
    /// (`x509_cert_error`'s `filepath`).
    public var certificatePaths: [String: String] = [:]

    public init(
        date: Date,
        results: [CheckResult],
        failure: String? = nil,
        secretsAsked: Bool,
        apps: [AppReadiness]? = nil
    ) {
        self.date = date
        self.results = results
        self.failure = failure
        self.secretsAsked = secretsAsked
        self.apps = apps ?? AppReadiness.atLeastOneFitCredential(results)
    }

    /// A check's report as the metrics publish it. A store (or the apps asked about in it) gets
    /// the library's per-app verdict; files named have no store to select among, so their apps'
    /// readiness follows from the results alone.
    public init(_ report: CheckReport, store: CredentialStore) {
        let request = report.request
        let apps =
            request.credentials.isEmpty
            ? AppReadiness.verdicts(
                stored: report.stored,
                results: report.results,
                topics: request.topics,
                environments: request.environment.map { [$0] } ?? PushEnvironment.allCases
            ) : nil
        self.init(date: request.date, results: report.results, secretsAsked: !request.skipSecrets, apps: apps)
        if request.credentials.isEmpty || !report.stored.isEmpty {
            source = X509Source.of(store)
            stored = report.stored
        }
        locateFiles(in: store, stored: report.stored)
    }

    /// A store that could not be read: the file still says when the check ran, and that it failed.
    public static func failed(at date: Date, _ message: String, source: X509Source? = nil) -> CheckRun {
        var run = CheckRun(date: date, results: [], failure: message, secretsAsked: false, apps: [])
        run.source = source
        return run
    }

    /// The Secret Service was out of reach for at least one credential.
    public var secretServiceUnreachable: Bool {
        results.contains { $0.findings.contains { $0.code == .secretUnverified } }
    }

    /// 0 when the store could not be read or the Secret Service was out of reach.
    public var success: Bool { failure == nil && !secretServiceUnreachable }

    /// Gives each stored certificate the path of its file in the store, as x509-certificate-exporter's
    /// `filepath`; a file checked by name keeps the name it was given.
    /// `stored` is the store's index, as the check read it.
    public mutating func locateFiles(in store: CredentialStore, stored: [StoredCredential]) {
        for credential in stored {
            if let path = store.certificatePath(of: credential) { certificatePaths[credential.alias] = path }
        }
        for index in results.indices where results[index].x509 != nil {
            let result = results[index]
            if result.origin == "store",
                let credential = stored.first(where: { $0.alias == result.name }),
                let path = store.certificatePath(of: credential)
            {
                results[index].x509?.filepath = path
            } else if result.origin == "file" {
                results[index].x509?.filepath = result.name
            }
        }
    }
}

/// Whether an app can be pushed to in an environment.
public struct AppReadiness: Sendable, Equatable {
    public var app: String
    public var environment: PushEnvironment
    public var ready: Bool
    /// The fit credentials for the app there.
    public var fit: [String]

    public init(app: String, environment: PushEnvironment, ready: Bool, fit: [String]) {
        self.app = app
        self.environment = environment
        self.ready = ready
        self.fit = fit
    }

    /// The per-app verdict of the library's one rule (``AppSelection``, ``AppVerdict``): for each
    /// app of the store (or each topic asked about) and each environment, ready when one of the
    /// selected credentials is fit. An environment no selected credential serves is left out, so a
    /// development app is not reported as not ready for production.
    public static func verdicts(
        stored: [StoredCredential],
        results: [CheckResult],
        topics: [String] = [],
        environments: [PushEnvironment] = PushEnvironment.allCases
    ) -> [AppReadiness] {
        environments.flatMap { environment in
            AppSelection.select(topics: topics, environment: environment, stored: stored).compactMap {
                selection -> AppReadiness? in
                guard !selection.candidates.isEmpty else { return nil }
                let verdict = AppVerdict(selection, results: results)
                guard verdict.state != .sandboxOnly else { return nil }
                return AppReadiness(app: verdict.app, environment: environment, ready: verdict.ready, fit: verdict.fit)
            }
        }.sorted { ($0.app, $0.environment) < ($1.app, $1.environment) }
    }

    /// Fit for the environments it is for: a check made against one environment finds the
    /// others mismatched, which says nothing about them.
    static func fit(_ result: CheckResult) -> Bool {
        let aboutEnvironment: [FindingCode] = [.environmentMismatch, .environmentUnknown]
        return result.error == nil
            && !result.findings.contains { $0.severity == .problem && !aboutEnvironment.contains($0.code) }
    }

    /// The rule "at least one fit credential per app and environment", computed from check
    /// results alone: for credentials checked as files, which no store selects among. Every app
    /// that a credential names is listed for every environment one of its credentials is for; a
    /// token key recorded without topics serves every app of the store in its environments.
    public static func atLeastOneFitCredential(_ results: [CheckResult]) -> [AppReadiness] {
        var apps: [String: [PushEnvironment: [String]]] = [:]
        let teamWide = results.filter { $0.kind == .tokenKey && $0.topics.isEmpty && $0.error == nil }
        for result in results where result.error == nil {
            for app in Set(result.topics.map(TopicScope.app(of:))) {
                for environment in result.environments {
                    apps[app, default: [:]][environment, default: []] += fit(result) ? [result.name] : []
                }
            }
        }
        for key in teamWide {
            for app in apps.keys {
                for environment in key.environments {
                    apps[app, default: [:]][environment, default: []] += fit(key) ? [key.name] : []
                }
            }
        }
        return apps.keys.sorted().flatMap { app in
            PushEnvironment.allCases.compactMap { environment -> AppReadiness? in
                guard let fit = apps[app]?[environment] else { return nil }
                return AppReadiness(app: app, environment: environment, ready: !fit.isEmpty, fit: fit)
            }
        }
    }
}
