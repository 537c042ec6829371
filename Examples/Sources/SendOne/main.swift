// Sends one alert with a credential from apnsctl's store and prints APNs' answer.
//
//   SendOne ALIAS DEVICE_TOKEN [HOST:PORT CA_FILE]
//
// The store is APNSCTL_STORE's, else apnsctl's default; its passwords and keys come from the
// Secret Service. Without HOST:PORT it sends to Apple's gateway for the credential's environment.
import Foundation
import PushChecks
import PushGateway
import PushStore
import PushTeam

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 || arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: SendOne ALIAS DEVICE_TOKEN [HOST:PORT CA_FILE]\n".utf8))
    exit(64)
}

do {
    // The store apnsctl uses, opened as a team store when it is one.
    let store = await StoreOpener.open(root: CredentialStore.defaultRoot())
    let credential = try await CredentialLoader.load(arguments[0], store: store)

    // The environment is the credential's own (sandbox when it serves both); the topic its app's.
    let settings = ConnectionSettings(
        gateway: arguments.count == 4 ? arguments[2] : nil,
        caFiles: arguments.count == 4 ? [arguments[3]] : []
    )
    let plan = try GatewayPlan(credential, settings: settings)
    for warning in plan.warnings { FileHandle.standardError.write(Data("warning: \(warning.message)\n".utf8)) }

    let notification = PushNotification(
        deviceToken: try DeviceToken(arguments[1]),
        topic: plan.topic,
        pushType: .alert,
        payload: try Payload.alert(title: "Hello", body: "Sent with a stored credential")
    )

    // One connection, closed (and the close awaited) once the answer is in.
    let response = try await plan.send(notification)

    if response.isAccepted {
        print("accepted: \(response.status) apns-id \(response.apnsID?.uuidString ?? "-")")
    } else {
        print("rejected: \(response.status) \(response.reason?.rawValue ?? "")")
        if let reason = response.reason { print("  \(reason.explanation)\n  fix: \(reason.fix)") }
        exit(1)
    }
} catch let error as any ReportableError {
    // Every library error has a code, a sentence naming what it is about, and what to do.
    FileHandle.standardError.write(Data("error: \(error.statement)\n".utf8))
    if let hint = error.hint { FileHandle.standardError.write(Data("  hint: \(hint)\n".utf8)) }
    exit(2)
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(2)
}
