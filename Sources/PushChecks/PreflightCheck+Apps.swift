import CredentialFormats
import Foundation
import PushGateway
import PushStore

extension PreflightReport {
    /// How this report counts in an app's verdict. A blocking finding makes the credential unfit
    /// whatever the network did; a gateway that could not be reached (network, DNS, TLS, proxy),
    /// an auth check without a verdict, or a Secret Service out of reach leave it not judged.
    public var fitness: CredentialFitness {
        if ready { return .fit }
        if blockingFinding != nil { return .unfit }
        if connectionError != nil || authCheck?.verdict == .inconclusive { return .couldNotCheck }
        // A credential that is not there (a mistyped alias or path) or a Secret Service that
        // cannot answer was not checked: exit 2, as every other command says of it.
        let notChecked: Set<ErrorCode> = [.secretStoreUnavailable, .secretStoreLocked, .aliasNotFound, .fileNotFound]
        if let code = error?.code, notChecked.contains(code) {
            return .couldNotCheck
        }
        return .unfit
    }
}

/// One app's preflight: its verdict and the reports of the candidates that were probed.
public struct AppPreflight: Sendable {
    public var verdict: AppVerdict
    /// One per candidate, in store order; skipped credentials have none (they were not probed).
    public var reports: [PreflightReport]
}

extension PreflightCheck {
    /// Preflights the candidates of one app, each for the selection's topic, and judges the app.
    /// Only candidates are loaded and probed: another app's credential never reaches the gateway.
    public func run(
        _ selection: AppSelection,
        loader: CredentialLoader,
        each: (PreflightReport) -> Void = { _ in }
    ) async -> AppPreflight {
        var check = self
        check.topic = selection.topic
        var reports: [PreflightReport] = []
        var judged: [String: CredentialFitness] = [:]
        for candidate in selection.candidates {
            let report: PreflightReport
            if candidate.kind == .tokenKey, candidate.topics.isEmpty || candidate.environments.isEmpty {
                // Its scope is unknown: judged as `check` judges it (unfit until its topics and
                // environments are recorded), and not sent with.
                let expectations = CheckExpectations(
                    date: date,
                    warnDays: warnDays,
                    environment: environment,
                    topic: selection.topic
                )
                var unprobed = PreflightReport(credential: candidate.alias, topic: selection.topic)
                unprobed.isStored = true
                unprobed.findings =
                    CredentialCheck.tokenKey(candidate, keyPresent: nil, expectations: expectations)
                    .findings
                report = unprobed
            } else {
                report = await check.check(candidate.alias, loader: loader)
            }
            judged[candidate.alias] = report.fitness
            reports.append(report)
            each(report)
        }
        return AppPreflight(verdict: AppVerdict(selection, judged: judged), reports: reports)
    }
}
