// Sends one alert to every token of a file, one result line per token in RESULTS. Run it again
// with the same arguments to resume: tokens with a final result are not sent again. SIGINT or
// SIGTERM stops taking tokens, lets the notifications in flight finish and records the stop.
//
//   BulkSend ALIAS TOKENS_FILE RESULTS [HOST:PORT CA_FILE]
import Foundation
import PushBulk
import PushChecks
import PushGateway
import PushStore
import PushTeam

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3 || arguments.count == 5 else {
    FileHandle.standardError.write(Data("usage: BulkSend ALIAS TOKENS_FILE RESULTS [HOST:PORT CA_FILE]\n".utf8))
    exit(64)
}
let (tokens, results) = (arguments[1], arguments[2])

/// Stops the run on SIGINT or SIGTERM once sending has started.
final class StopOnSignal: BulkSendObserver, @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    func willSend(_ started: BulkSendJob.Started) {
        // Dispatch delivers the signals only once their default action (ending the process) is off.
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { started.sender.stop() }
            source.resume()
            sources.append(source)
        }
    }
    func didEnd() { for source in sources { source.cancel() } }
}

do {
    // The store apnsctl uses, opened as a team store when it is one.
    let store = await StoreOpener.open(root: CredentialStore.defaultRoot())
    let credential = try await CredentialLoader.load(arguments[0], store: store)
    let settings = ConnectionSettings(gateway: arguments.dropFirst(3).first, caFiles: Array(arguments.dropFirst(4)))
    let plan = try GatewayPlan(credential, settings: settings)
    let template = NotificationTemplate(
        topic: plan.topic,
        payload: try Payload.alert(title: "Hello", body: "Sent in bulk")
    )

    // A results file that exists is a run to continue; the run's header refuses any other send.
    let resuming = FileManager.default.fileExists(atPath: results)
    let request = BulkSendJob.Request(
        configuration: plan.configuration,
        template: template,
        tokens: tokens,
        results: resuming ? nil : results,
        resume: resuming ? results : nil
    )
    let summary = try await BulkSendJob.run(request, observer: StopOnSignal()).summary
    print("\(summary.results) results, \(summary.accepted) accepted")
    if let cause = summary.stoppedBy {
        print("stopped (\(cause.rawValue)): \(summary.stopMessage ?? ""); run again to resume")
        exit(2)
    }
} catch let error as any ReportableError {
    FileHandle.standardError.write(Data("error: \(error.statement)\n".utf8))
    if let hint = error.hint { FileHandle.standardError.write(Data("  hint: \(hint)\n".utf8)) }
    exit(2)
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(2)
}
