import ArgumentParser
import CredentialFormats
import Foundation
import PushChecks

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Show the credentials in the store.",
        discussion: """
            Reads only the store's index and public certificates; the Secret Service is not touched. \
            Expired and expiring credentials are shown, not judged: `apnsctl check` judges them.

            Exit status: 0 listed (an empty store too); 1 the store needs attention, as the lines \
            under the table (or "unaccounted_files" and each credential's "damaged" in --json) say: \
            an entry that names a file outside the store, or a credential file the store wrote \
            that no entry names; 2 the store could not be read; 64 usage error.

            Examples:
              apnsctl list
              apnsctl list --json
            """
    )

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print a versioned JSON report instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("Mark certificates that expire within this many days.", valueName: "N"))
    var warnDays = 30

    func run() async throws {
        let store = try await self.store.credentialStore
        let listing = try await withUserErrors { try await store.listing() }
        let now = Date()
        let rows = listing.entries.map {
            CredentialSummary($0.credential, at: now, warnDays: warnDays, damage: $0.damage)
        }
        let requests = listing.pendingRequests
        let unaccounted = listing.unaccountedFiles
        if json {
            try printJSON(
                ListOutput(
                    store: store.path,
                    credentials: rows,
                    pendingRequests: requests.map(PendingRequestSummary.init),
                    unaccountedFiles: unaccounted
                )
            )
            if listing.needsAttention { throw ExitStatus.problem }
            return
        }
        guard !listing.isEmpty else {
            print("The store at \(store.path) is empty. Add a credential with `apnsctl import FILE`.")
            return
        }
        let style = TerminalStyle.stdout
        var table = CredentialTable()
        for row in rows {
            let (word, colour): (String, [TerminalStyle.Attribute])
            switch row.status {
            case _ where row.damaged != nil: (word, colour) = ("damaged", [.red, .bold])
            case .valid?: (word, colour) = ("valid", [.green])
            case .expiring?: (word, colour) = ("expiring", [.yellow, .bold])
            case .expired?: (word, colour) = ("expired", [.red, .bold])
            case .notYetValid?: (word, colour) = ("not yet valid", [.red])
            case nil: (word, colour) = ("n/a", [.dim])
            }
            let expires = row.notAfter.map(CertificateRenderer.day) ?? "never"
            table.rows.append(
                CredentialTable.Row(
                    // Aliases and topics come from an index anyone can edit: each shown, never obeyed.
                    alias: Untrusted.display(row.alias),
                    kind: row.kind == .tokenKey ? "token key" : "certificate",
                    topics: row.topics.map { Untrusted.display($0.name) },
                    environments: row.environments.isEmpty
                        ? "?" : row.environments.map(\.rawValue).joined(separator: "+"),
                    compactEnvironments: Self.compact(row.environments),
                    expires: expires,
                    paintedExpires: style.paint(expires, colour),
                    daysLeft: row.daysLeft.map(String.init) ?? "-",
                    status: style.paint(word, colour)
                )
            )
        }
        // A pending request has a key but no certificate yet: `apnsctl import aps.cer` completes it.
        for request in requests {
            table.rows.append(
                CredentialTable.Row(
                    alias: Untrusted.display(request.alias),
                    kind: "pending request",
                    topics: [],
                    environments: "?",
                    compactEnvironments: "?",
                    expires: "-",
                    paintedExpires: "-",
                    daysLeft: "-",
                    status: style.paint("awaiting certificate", .yellow)
                )
            )
        }
        print(table.render(style: style, width: style.fittingWidth))
        for damage in listing.damaged {
            let error = damage.error.forCommandLine
            print("\n\(style.paint("!", .red, .bold)) \(error.message)")
            if let hint = error.hint { print("  \(style.paint("→ \(hint)", .dim))") }
        }
        for path in unaccounted {
            let finding = CredentialCheck.unaccountedFile(path).findings[0]
            print("\n\(style.paint("!", .red, .bold)) \(Untrusted.display(finding.message))")
            if let hint = finding.hint { print("  \(style.paint("→ \(hint)", .dim))") }
        }
        if listing.needsAttention { throw ExitStatus.problem }
    }
}

extension List {
    /// Environments in as few columns as they can take without losing anything.
    static func compact(_ environments: [PushEnvironment]) -> String {
        switch Set(environments) {
        case []: return "?"
        case [.sandbox, .production]: return "both"
        case [.production]: return "prod"
        default: return environments.map(\.rawValue).joined(separator: "+")
        }
    }
}

struct ListOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var store: String
    var credentials: [CredentialSummary]
    var pendingRequests: [PendingRequestSummary]
    /// Credential files of the store that no index entry names (never deleted by apnsctl).
    var unaccountedFiles: [String]
}
