import CredentialFormats
import PushCore
import PushStore

extension Send {
    /// The notification's body, from whichever of the payload options was given.
    func makePayload() throws -> [UInt8] {
        if let built = try liveActivity.payload(alert: alert, title: title, sound: sound) { return built }
        if let alert { return try Payload.alert(title: title, body: alert, sound: sound, badge: badge) }
        if background { return try Payload.background() }
        guard let payload else { return [] }
        if payload == "-" {
            return try InputFile.read(path: payload, kind: .payload)
        }
        return try CredentialFile.readBytes(path: payload, kind: .payload)
    }
}
