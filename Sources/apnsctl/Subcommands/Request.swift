import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

struct Request: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Make a key and a certificate signing request (CSR) for a push certificate from Apple.",
        discussion: """
            Makes an RSA 2048 key (what Apple's portal requires for push certificates) straight into \
            the Secret Service, never into a file, and writes a CSR signed with it to --out. The store \
            keeps a pending request (alias, public-key fingerprint, subject, date) until the \
            certificate Apple issues for it is imported: `apnsctl import aps.cer` finds the pending \
            key and stores the complete identity. `apnsctl list` shows pending requests; `apnsctl \
            remove ALIAS` discards one and its key. docs/onboarding.md walks through Apple's portal.

            Exit status: 0 the key, the CSR and the pending request were made; 1 refused, nothing \
            made: the --out file exists, or the --alias is taken; 2 nothing made (the Secret \
            Service or the store could not be written); 64 usage error (an alias or subject field \
            that cannot be used).

            Examples. The first makes the key and the CSR to upload; the second stores the \
            certificate Apple returns for it.
              apnsctl request --out push.csr --email dev@example.com --country US
              apnsctl import aps.cer
            """
    )

    @Option(
        help: ArgumentHelp("Where to write the CSR (PEM); an existing file is never overwritten.", valueName: "FILE")
    )
    var out: String

    @Option(
        help: ArgumentHelp(
            "The name to store it under (default: request-… from the key, then bundle ID and environment once the certificate is imported).",
            valueName: "NAME"
        )
    )
    var alias: String?

    @Option(help: ArgumentHelp("The CSR's common name, a name for the key.", valueName: "TEXT"))
    var commonName = "apnsctl push key"

    @Option(help: ArgumentHelp("An email address for the CSR's subject.", valueName: "ADDR"))
    var email: String?

    @Option(help: ArgumentHelp("A two-letter country code for the CSR's subject.", valueName: "CC"))
    var country: String?

    @OptionGroup var store: StoreOptions

    @Flag(help: "Print the pending request and the next steps as JSON.")
    var json = false

    func validate() throws {
        do {
            if let alias { try CredentialStore.validateAlias(alias) }
            try RequestSubject(commonName: commonName, email: email, country: country).validate()
        } catch let error as CredentialError {
            throw ValidationError(error.message + (ErrorHints.hint(for: error).map { " " + $0 } ?? ""))
        }
    }

    func run() async throws {
        let store = try await self.store.credentialStore
        let result = try await withUserErrors {
            try await store.createRequest(
                subject: RequestSubject(commonName: commonName, email: email, country: country),
                alias: alias,
                path: out
            )
        }
        let pending = result.pending
        let importCommand = ErrorHints.command("import", "aps.cer")
        var steps = [
            "Sign in at https://developer.apple.com/account and open Certificates, Identifiers & Profiles → Certificates → +.",
            "Choose \"Apple Push Notification service SSL (Sandbox & Production)\" and Continue.",
            "Choose the App ID of your app and Continue.",
            "Upload \(out) and Continue.",
            "Download the certificate (aps.cer).",
        ]
        // An app that already has a certificate here is renewed with --replace, which keeps its alias.
        let renewals = (try? await store.renewals()) ?? []
        if renewals.isEmpty {
            steps.append("Store it with its key: \(importCommand)")
        } else {
            steps.append(
                "Store it with its key. For an app the store already has a certificate for, name the one it replaces (the new one takes its alias, so scripts keep working):"
            )
            for (app, alias) in renewals {
                steps.append("  \(app): \(ErrorHints.command("import", "aps.cer", "--replace", alias))")
            }
            steps.append("  a new app: \(importCommand)")
        }
        if json {
            try printJSON(
                RequestOutput(
                    store: store.path,
                    csr: out,
                    request: PendingRequestSummary(pending),
                    nextSteps: steps
                )
            )
            return
        }
        let style = TerminalStyle.stdout
        print("\(style.paint("✓", .green)) Wrote the certificate signing request \(style.paint(out, .bold))")
        print("  subject: \(pending.subject)")
        print(
            "  key: \(pending.keyType), made in the Secret Service (label \"apnsctl: \(pending.alias)\"); it is in no file"
        )
        print("  public key SHA-256: \(pending.publicKeyFingerprint)")
        print("  pending in the store at \(store.path) as \(style.paint(pending.alias, .bold))")
        print("")
        print("Next, at Apple's developer portal:")
        var number = 0
        for step in steps {
            if step.hasPrefix("  ") {
                print("     \(step.dropFirst(2))")
            } else {
                number += 1
                print("  \(number). \(step)")
            }
        }
        print("")
        print(
            "`\(ErrorHints.command("list"))` shows the pending request; `\(ErrorHints.command("remove", pending.alias))` discards it and its key."
        )
    }
}

struct RequestOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var store: String
    var csr: String
    var request: PendingRequestSummary
    var nextSteps: [String]
}
