// Asks whether one app can be pushed to in one environment with what apnsctl's store holds: the
// per-app preflight a deploy runs, from the libraries alone, worded by this program.
//
//   AppPreflight BUNDLE_ID sandbox|production [HOST:PORT CA_FILE]
//
// Every stored credential for the app is loaded (its password or key from the Secret Service),
// checked, and tried against the gateway with a made-up device token: the app is ready when one
// of them is fit. Exit 0 ready, 1 not ready, 2 could not tell.
import Foundation
import PushChecks
import PushGateway
import PushStore
import PushTeam

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 || arguments.count == 4, let environment = PushEnvironment(rawValue: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: AppPreflight BUNDLE_ID sandbox|production [HOST:PORT CA_FILE]\n".utf8))
    exit(64)
}
let app = arguments[0]

do {
    let store = await StoreOpener.open(root: CredentialStore.defaultRoot())
    let settings = ConnectionSettings(
        gateway: arguments.count == 4 ? arguments[2] : nil,
        caFiles: arguments.count == 4 ? [arguments[3]] : []
    )
    let check = PreflightCheck(environment: environment, settings: settings)
    // The app's candidates, chosen by the same rule as apnsctl's own preflight.
    let selections = AppSelection.select(topics: [app], environment: environment, stored: try await store.list())
    var verdicts: [AppVerdict] = []
    for selection in selections {
        let result = await check.run(selection, loader: CredentialLoader(store: store)) { report in
            let mark = report.ready ? "fit" : "not fit"
            let why = report.findings.first.map { ": \($0.message)" } ?? ""
            print("  \(report.credential): \(mark)\(why)")
        }
        verdicts.append(result.verdict)
    }
    for verdict in verdicts {
        switch verdict.state {
        case .ready:
            print("\(verdict.topic) can be pushed to in \(environment) with \(verdict.fit.joined(separator: " or ")).")
        case .sandboxOnly:
            print("\(verdict.topic) has a credential for sandbox only; production is not asked of it.")
        case .couldNotCheck:
            print("\(verdict.topic): could not tell (\(verdict.couldNotCheck.joined(separator: ", ")) not judged).")
        case .notReady:
            print("\(verdict.topic) cannot be pushed to in \(environment): nothing stored is fit for it.")
        }
    }
    // The libraries give an outcome; what it means to this program's caller is decided here.
    switch AppVerdict.outcome(verdicts) {
    case .allWell: exit(0)
    case .problemFound: exit(1)
    case .couldNotCheck: exit(2)
    }
} catch let error as any ReportableError {
    FileHandle.standardError.write(Data("error: \(error.statement)\n".utf8))
    if let hint = error.hint { FileHandle.standardError.write(Data("  hint: \(hint)\n".utf8)) }
    exit(2)
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(2)
}
