import CredentialFormats
import Foundation
import PushStore

/// A stored credential as every JSON report shows it (`list`, `import`, `update`): named
/// `credential`, its topics as objects with their kinds, and its validity as of now.
struct CredentialSummary: Encodable {
    var alias: String
    var kind: StoredCredential.Kind
    /// Each topic with its kinds, as the certificate names them.
    var topics: [PushTopic]
    var environments: [PushEnvironment]
    var subject: String?
    var notBefore: Date?
    var notAfter: Date?
    var daysLeft: Int?
    var status: ValidityStatus?
    var sha256: String?
    var keyID: String?
    var teamID: String?
    var publicKeySha256: String?
    var importedAt: Date
    var source: String?
    var secret: SecretItem.Kind
    var certificateFile: String?
    var bundleFile: String?
    /// Set when the entry names a file outside the store (see ``DamagedEntry``).
    var damaged: Damage?

    struct Damage: Encodable {
        var path: String
        var resolved: String?
        var message: String
    }

    enum CodingKeys: String, CodingKey {
        case alias = "credential"
        case kind, topics, environments, subject, notBefore, notAfter, daysLeft, status, sha256
        // Acronym raw values spelled as ReportSchema requires (`key_id`, `team_id`).
        case keyID = "keyId"
        case teamID = "teamId"
        case publicKeySha256, importedAt, source, secret, certificateFile, bundleFile, damaged
    }

    init(_ credential: StoredCredential, at date: Date = Date(), warnDays: Int = 30, damage: DamagedEntry? = nil) {
        damaged = damage.map { Damage(path: $0.path, resolved: $0.resolved, message: $0.message) }
        alias = credential.alias
        kind = credential.kind
        topics = PushTopic.described(credential.topics)
        environments = credential.environments
        subject = credential.subject
        notBefore = credential.notBefore
        notAfter = credential.notAfter
        sha256 = credential.sha256
        keyID = credential.keyID
        teamID = credential.teamID
        publicKeySha256 = credential.publicKeyFingerprint
        importedAt = credential.importedAt
        source = credential.source
        secret = credential.secret
        certificateFile = credential.certificateFile
        bundleFile = credential.bundleFile
        if let notAfter = credential.notAfter {
            daysLeft = ValidityStatus.daysLeft(until: notAfter, at: date)
            status = ValidityStatus(
                notBefore: credential.notBefore ?? .distantPast,
                notAfter: notAfter,
                at: date,
                warnDays: warnDays
            )
        }
    }
}

/// A pending certificate request as JSON reports show it: named `credential`, as the
/// credential it becomes once Apple's certificate is imported.
struct PendingRequestSummary: Encodable {
    var credential: String
    var aliasChosen: Bool
    var subject: String
    var keyType: String
    var publicKeyFingerprint: String
    var requestedAt: Date
    var requestFile: String?

    init(_ request: PendingRequest) {
        credential = request.alias
        aliasChosen = request.aliasChosen
        subject = request.subject
        keyType = request.keyType
        publicKeyFingerprint = request.publicKeyFingerprint
        requestedAt = request.requestedAt
        requestFile = request.requestFile
    }
}
