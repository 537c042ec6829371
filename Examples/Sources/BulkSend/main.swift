// Sends one alert to every token of a file, one result line per token in RESULTS. Run it again
// with the same arguments to resume: tokens with a final result are not sent again. SIGINT or
// SIGTERM stops taking tokens, lets the notifications in flight finish and records the stop.
//
//   BulkSend ALIAS TOKENS_FILE RESULTS [HOST:PORT CA_FILE]
import Foundation
import PushCredentials
import PushGateway

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3 || arguments.count == 5 else {
    FileHandle.standardError.write(Data("usage: BulkSend ALIAS TOKENS_FILE RESULTS [HOST:PORT CA_FILE]\n".utf8))
    exit(64)
}
let (tokens, results) = (arguments[1], arguments[2])

do {
    let store = CredentialStore(root: CredentialStore.defaultRoot())
    let credential = try CredentialLoader(store: store).load(arguments[0])
    let settings = ConnectionSettings(gateway: arguments.dropFirst(3).first, caFiles: Array(arguments.dropFirst(4)))
    let environment = settings.chooseEnvironment(for: credential).environment
    let configuration = try settings.configuration(for: credential, environment: environment).configuration
    let body = try Payload.alert(title: "Hello", body: "Sent in bulk")
    let template = NotificationTemplate(topic: credential.defaultTopic(for: .alert), payload: body)

    // The header records what the run sends with: a resume with anything else is refused.
    let header = BulkRunHeader(
        credential: configuration.credential.fingerprint,
        template: template,
        gateway: configuration.endpoint.description
    )
    let resuming = FileManager.default.fileExists(atPath: results)
    let run = try BulkRun.open(header: header, results: resuming ? nil : results, resume: resuming ? results : nil)
    let feed = try TokenFeed.open(path: tokens, resume: run.state)
    let sender = try BulkSender(
        configuration: configuration,
        template: template,
        options: BulkSender.Options(),
        feed: feed,
        output: run.output
    )

    // Dispatch delivers the signals only once their default action (ending the process) is off.
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let stops = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0) }
    for source in stops {
        source.setEventHandler { sender.stop() }
        source.resume()
    }

    let ended: BulkSummary
    do { ended = try await sender.run() } catch {
        run.abandon()  // no connection could be made: nothing was sent, a new results file is removed
        throw error
    }
    let summary = run.conclude(ended, tokensRead: feed.entriesRead)
    print("\(summary.results) results, \(summary.accepted) accepted")
    if let cause = summary.stoppedBy {
        print("stopped (\(cause.rawValue)): \(summary.stopMessage ?? ""); run again to resume")
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(2)
}
