// Sends one alert with a credential from apnsctl's store and prints APNs' answer.
//
//   SendOne ALIAS DEVICE_TOKEN [HOST:PORT CA_FILE]
//
// The store is APNSCTL_STORE's, else apnsctl's default; its passwords and keys come from the
// Secret Service. Without HOST:PORT it sends to Apple's gateway for the credential's environment.
import Foundation
import PushCredentials
import PushGateway

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 || arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: SendOne ALIAS DEVICE_TOKEN [HOST:PORT CA_FILE]\n".utf8))
    exit(64)
}

do {
    let store = CredentialStore(root: CredentialStore.defaultRoot())
    let credential = try CredentialLoader(store: store).load(arguments[0])

    let settings = ConnectionSettings(
        gateway: arguments.count == 4 ? arguments[2] : nil,
        caFiles: arguments.count == 4 ? [arguments[3]] : []
    )
    let environment = settings.chooseEnvironment(for: credential).environment
    let plan = try settings.configuration(for: credential, environment: environment)

    let notification = PushNotification(
        deviceToken: try DeviceToken(arguments[1]),
        topic: credential.defaultTopic(for: .alert),
        pushType: .alert,
        payload: try Payload.alert(title: "Hello", body: "Sent with a stored credential")
    )

    let connection = GatewayConnection(configuration: plan.configuration)
    _ = try await connection.connect()
    let response = try await connection.send(notification)
    await connection.close()

    if response.isAccepted {
        print("accepted: \(response.status) apns-id \(response.apnsID?.uuidString ?? "-")")
    } else {
        print("rejected: \(response.status) \(response.reason?.rawValue ?? "")")
        if let reason = response.reason { print("  \(reason.explanation)\n  fix: \(reason.fix)") }
        exit(1)
    }
} catch {
    // Library errors say what went wrong and what to do about it.
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(2)
}
