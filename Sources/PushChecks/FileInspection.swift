import CredentialFormats
import Foundation
import PushStore

/// What a file named for inspection turned out to be, told from its name (a token key's
/// `AuthKey_KEYID.p8`) and its contents, never from its extension alone.
public enum InspectedFile: Sendable {
    /// A certificate file or a token key, with the findings it carries on its own.
    case credential(FileReport)
    /// A certificate signing request.
    case request(CertificateRequest)
}

extension FileReport {
    /// Reads and reports one file. A token key's team and restrictions are what the person says
    /// (the `.p8` records none); a certificate bundle is opened with `password`.
    public static func inspect(
        path: String,
        password: PasswordSource = .none,
        keyID: String? = nil,
        teamID: String? = nil,
        topics: [String] = [],
        environments: [PushEnvironment] = [],
        at date: Date = Date(),
        warnDays: Int = 30
    ) throws -> InspectedFile {
        if TokenKeyFile.isTokenKeyPath(path) {
            let key = try TokenKeyFile(path: path, keyID: keyID)
            let report = TokenKeyReport(
                key,
                keyIDGiven: keyID != nil,
                teamID: teamID,
                topics: topics,
                environments: environments
            )
            return .credential(FileReport(tokenKey: report, path: path))
        }
        // Read once: `<(command)` and standard input can be read only once.
        let bytes = try CredentialFile.readBytes(path: path)
        if let request = try CertificateRequest(requestIn: bytes, path: path) { return .request(request) }
        let file = try CredentialFile.decode(bytes, path: path, password: password)
        return .credential(FileReport(file, at: date, warnDays: warnDays))
    }
}
