import CredentialFormats
import Foundation
import PushStore

/// What a check is asked: which credentials, against what.
public struct CheckRequest: Sendable {
    /// Aliases or files; none means every stored credential.
    public var credentials: [String]
    /// The apps about to be pushed to. With no credential named, each gets one verdict
    /// (``AppVerdict``); a named credential is judged against the first.
    public var topics: [String]
    public var date: Date
    public var warnDays: Int
    /// The environment about to be deployed against.
    public var environment: PushEnvironment?
    /// For certificate files named.
    public var password: PasswordSource
    /// Judge only what the stored files say, without asking the Secret Service for keys.
    public var skipSecrets: Bool
    /// Token key files: the team and key ID a person gave (a `.p8` records neither).
    public var teamID: String?
    public var keyID: String?
    /// Whether what a command killed earlier left is completed or undone before the store is
    /// judged. Off for a reader that must never write, such as a long-running exporter.
    public var settlesInterruptedChanges: Bool

    public init(
        credentials: [String] = [],
        topics: [String] = [],
        date: Date = Date(),
        warnDays: Int = 30,
        environment: PushEnvironment? = nil,
        password: PasswordSource = .none,
        skipSecrets: Bool = false,
        teamID: String? = nil,
        keyID: String? = nil,
        settlesInterruptedChanges: Bool = true
    ) {
        self.credentials = credentials
        self.topics = topics
        self.date = date
        self.warnDays = warnDays
        self.environment = environment
        self.password = password
        self.skipSecrets = skipSecrets
        self.teamID = teamID
        self.keyID = keyID
        self.settlesInterruptedChanges = settlesInterruptedChanges
    }

    public var expectations: CheckExpectations {
        CheckExpectations(date: date, warnDays: warnDays, environment: environment, topic: topics.first)
    }

    /// Every stored credential judged strictly, with the store's own health (orphaned secrets,
    /// unaccounted files) and a verdict per app found in it.
    public var isWholeStore: Bool { credentials.isEmpty && topics.isEmpty }

    /// One verdict per app asked about: only each app's own credentials are judged.
    public var isPerApp: Bool { credentials.isEmpty && !topics.isEmpty }
}

/// What a check found: a result per credential judged and, for a store, the verdict per app.
public struct CheckReport: Sendable {
    public var request: CheckRequest
    public var results: [CheckResult]
    /// With topics and no credential named: one verdict per app asked about, which decides the
    /// exit status.
    public var verdicts: [AppVerdict]?
    /// The whole store checked: one verdict per app found in it (reported; the exit status still
    /// follows every credential's findings).
    public var storeVerdicts: [AppVerdict]?
    /// The whole store checked for an environment: the credentials that do not serve it but
    /// whose app another stored credential serves there. Listed, never failures: the per-app
    /// rule (``AppSelection``) decides, as `preflight` does.
    public var skipped: [AppSelection.Skipped] = []
    /// The results that count: every one but the stored credentials in ``skipped``.
    public var judged: [CheckResult] {
        let skippedNames = Set(skipped.map(\.credential))
        return results.filter { !($0.origin == "store" && skippedNames.contains($0.name)) }
    }
    /// The stored credentials the check looked at: the store's list, or the aliases named.
    public var stored: [StoredCredential]
    /// The store holds nothing at all to check.
    public var nothingToCheck: Bool

    /// A problem: a finding at or above `threshold` (nil: findings never fail), or, per app, an
    /// app without a fit credential; could not check: something could not be judged.
    public func outcome(failingOn threshold: Finding.Severity?) -> CheckOutcome {
        if let verdicts { return AppVerdict.outcome(verdicts) }
        if nothingToCheck { return .couldNotCheck }
        let unverified = { (result: CheckResult) in result.findings.contains { $0.code == .secretUnverified } }
        if judged.contains(where: { unverified($0) || $0.error != nil }) { return .couldNotCheck }
        let failing = judged.flatMap(\.findings).contains { finding in
            switch threshold {
            case .warning: return true
            case .problem: return finding.severity == .problem
            case nil: return false
            }
        }
        return failing ? .problemFound : .allWell
    }
}

extension CredentialCheck {
    /// The one check `apnsctl check`, the metrics and a program make: the credentials named, the
    /// apps asked about (one verdict each, by ``AppSelection``'s rule), or the whole store.
    /// Throws only when the store cannot be read or a name is neither a file nor an alias; what
    /// could not be judged about one credential is in its result.
    public static func run(_ request: CheckRequest, in store: CredentialStore) async throws -> CheckReport {
        if request.settlesInterruptedChanges,
            request.credentials.isEmpty || !request.credentials.allSatisfy(FileManager.default.fileExists)
        {
            await store.settleInterruptedChanges()
        }
        var report = CheckReport(request: request, results: [], stored: [], nothingToCheck: false)
        let stored = request.credentials.isEmpty ? try await store.list() : []
        // Every key the check will read, read together: one Secret Service round trip, not one
        // per credential. What the batch leaves out is read alone, as before. The same search
        // lists the store's items for the orphan search.
        let reading =
            request.skipSecrets ? (store: store, unavailable: nil) : await store.preloadingSecrets(for: stored)
        var housekeeping: [CheckResult] = []
        if request.isWholeStore {
            housekeeping = await orphanResults(reading.store, skipSecrets: request.skipSecrets)
            housekeeping += await unaccountedResults(store)
        }
        let judge = CheckJudge(
            store: reading.store,
            expectations: request.expectations,
            password: request.password,
            skipSecrets: request.skipSecrets,
            teamID: request.teamID,
            keyID: request.keyID
        )
        if let unavailable = reading.unavailable, CheckJudge.isUnreachable(unavailable) {
            judge.knowUnreachable(unavailable)
        }
        guard request.credentials.isEmpty else {
            for argument in request.credentials {
                let reference = try await CredentialReference.resolve(argument, store: store)
                if case .stored(let credential) = reference { report.stored.append(credential) }
                report.results.append(await judge.check(reference))
            }
            return report
        }
        report.stored = stored
        if stored.isEmpty, housekeeping.isEmpty {
            report.nothingToCheck = true
            return report
        }
        if request.isPerApp {
            var verdicts: [AppVerdict] = []
            // Each app's judge starts from what the previous one learnt of the Secret Service, so
            // an unreachable one is asked once, not once per app.
            var appJudge = judge
            for selection in AppSelection.select(
                topics: request.topics,
                environment: request.environment,
                stored: stored
            ) {
                var scoped = request.expectations
                scoped.topic = selection.topic
                appJudge = appJudge.with(expectations: scoped)
                var results: [CheckResult] = []
                for candidate in selection.candidates {
                    if let result = stillStored(await appJudge.check(.stored(candidate))) { results.append(result) }
                }
                verdicts.append(AppVerdict(selection, results: results))
                report.results += results
            }
            report.verdicts = verdicts
        } else {
            for credential in stored {
                if let result = stillStored(await judge.check(.stored(credential))) { report.results.append(result) }
            }
            let selections = AppSelection.select(topics: [], environment: request.environment, stored: stored)
            report.storeVerdicts = selections.map { AppVerdict($0, results: report.results) }
            if request.environment != nil { report.skipped = servedElsewhere(selections, stored: stored) }
        }
        report.results += housekeeping
        return report
    }

    /// The credentials every app of which is served in the environment asked about by another
    /// credential, while they themselves do not serve it (a sandbox certificate beside the same
    /// app's production one), in store order.
    static func servedElsewhere(_ selections: [AppSelection], stored: [StoredCredential]) -> [AppSelection.Skipped] {
        stored.compactMap { credential in
            let apps = selections.filter { selection in
                selection.skipped.contains { $0.credential == credential.alias && $0.reason == .otherEnvironment }
            }
            guard let first = apps.first, apps.allSatisfy({ !$0.candidates.isEmpty }),
                let environment = first.environment,
                let own = first.skipped.first(where: { $0.credential == credential.alias })
            else { return nil }
            let servedBy = apps.map {
                "\($0.app) is served in \(environment) by \($0.candidates.map(\.alias).joined(separator: ", "))"
            }
            return AppSelection.Skipped(
                credential: credential.alias,
                reason: .otherEnvironment,
                message: "\(own.message); \(servedBy.joined(separator: ", and "))"
            )
        }
    }

    /// Nil when another command removed the credential since the store was listed: it is no
    /// longer in the store, which is not a finding about it.
    static func stillStored(_ result: CheckResult) -> CheckResult? {
        result.error?.code == .aliasNotFound ? nil : result
    }

    /// The store's orphaned secrets, when its keys are read: each a result with a finding.
    static func orphanResults(_ store: CredentialStore, skipSecrets: Bool) async -> [CheckResult] {
        guard !skipSecrets else { return [] }
        do {
            return try await store.orphanedSecrets().map(orphanedSecret)
        } catch let error as CredentialError where CheckJudge.isUnreachable(error) {
            // Each credential's own result already says the Secret Service could not be asked
            // (secret_unverified): one more "could not check" entry would only repeat it.
            return []
        } catch let error as CredentialError {
            return [CheckResult.failed(name: "orphaned secrets", origin: "store", error: error)]
        } catch {
            return [
                .failed(
                    name: "orphaned secrets",
                    origin: "store",
                    error: CredentialError(.secretStoreUnavailable, UserFacing.describe(error))
                )
            ]
        }
    }

    /// Credential files the index does not name (an older index.json restored, say). They need
    /// no Secret Service to find.
    static func unaccountedResults(_ store: CredentialStore) async -> [CheckResult] {
        ((try? await store.unaccountedFiles()) ?? []).map(unaccountedFile)
    }
}
