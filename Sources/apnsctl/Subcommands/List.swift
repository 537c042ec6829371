import ArgumentParser
import Foundation
import PushCredentials

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the credentials in the store.",
        discussion: """
            Reads only the store's index and public certificates; the Secret Service is not touched.

            Examples:
              apnsctl list
              apnsctl list --json
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print a versioned JSON report instead of a table.")
    var json = false

    @Option(
        name: .customLong("warn-days"),
        help: ArgumentHelp("Mark certificates that expire within this many days.", valueName: "N")
    )
    var warnDays = 30

    func run() async throws {
        let store = self.store.credentialStore
        let credentials: [StoredCredential]
        do {
            credentials = try store.list()
        } catch let error as CredentialError {
            reportError(error)
            throw ExitStatus.couldNotCheck
        }
        let now = Date()
        let rows = credentials.map { ListRow($0, at: now, warnDays: warnDays, damage: store.damage(of: $0)) }
        let damaged = credentials.compactMap { store.damage(of: $0) }
        if json {
            try printJSON(ListOutput(schemaVersion: ReportSchema.schemaVersion, store: store.path, credentials: rows))
            if !damaged.isEmpty { throw ExitStatus.problem }
            return
        }
        guard !rows.isEmpty else {
            print("The store at \(store.path) is empty. Add a credential with `apnsctl import FILE`.")
            return
        }
        let style = TerminalStyle.stdout
        let table = Table(headers: ["ALIAS", "KIND", "TOPICS", "ENVIRONMENTS", "EXPIRES", "DAYS LEFT", "STATUS"])
        for row in rows {
            let status: String
            switch row.status {
            case _ where row.damaged != nil: status = style.paint("damaged", .red, .bold)
            case .valid?: status = style.paint("valid", .green)
            case .expiring?: status = style.paint("expiring", .yellow, .bold)
            case .expired?: status = style.paint("expired", .red, .bold)
            case .notYetValid?: status = style.paint("not yet valid", .red)
            case nil: status = style.paint("n/a", .dim)
            }
            table.add([
                row.alias, row.kind == .tokenKey ? "token key" : "certificate",
                row.topics.isEmpty ? "-" : row.topics.joined(separator: ", "),
                row.environments.isEmpty ? "?" : row.environments.map(\.rawValue).joined(separator: "+"),
                row.notAfter.map(CertificateRenderer.day) ?? "never", row.daysLeft.map(String.init) ?? "-", status,
            ])
        }
        print(table.render(style: style))
        for damage in damaged {
            let error = damage.error.forCommandLine
            print("\n\(style.paint("!", .red, .bold)) \(error.message)")
            if let hint = error.hint { print("  \(style.paint("→ \(hint)", .dim))") }
        }
        if !damaged.isEmpty { throw ExitStatus.problem }
    }
}

struct ListRow: Encodable {
    var alias: String
    var kind: StoredCredential.Kind
    var topics: [String]
    var environments: [PushEnvironment]
    var notAfter: Date?
    var daysLeft: Int?
    var status: ValidityStatus?
    var sha256: String?
    var keyId: String?
    var teamId: String?
    var importedAt: Date
    /// Set when the entry names a file outside the store (see ``DamagedEntry``).
    var damaged: Damage?

    struct Damage: Encodable {
        var path: String
        var resolved: String?
        var message: String
    }

    init(_ credential: StoredCredential, at date: Date, warnDays: Int, damage: DamagedEntry? = nil) {
        damaged = damage.map { Damage(path: $0.path, resolved: $0.resolved, message: $0.message) }
        alias = credential.alias
        kind = credential.kind
        topics = credential.topics
        environments = credential.environments
        notAfter = credential.notAfter
        sha256 = credential.sha256
        keyId = credential.keyId
        teamId = credential.teamId
        importedAt = credential.importedAt
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

struct ListOutput: Encodable {
    var schemaVersion: Int
    var store: String
    var credentials: [ListRow]
}
