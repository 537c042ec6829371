import ArgumentParser
import CredentialFormats
import Foundation
import PushGateway
import PushStore

struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Check, before connecting, that the trust store holds the root APNs' servers chain to.",
        discussion: """
            Reads the trust store a connection would use (the system's bundle, or --ca-bundle in its \
            place, plus every --ca) and looks in it, by subject and by the SHA-256 of its public key, \
            for the root APNs' servers chain to in each environment: "USERTrust RSA Certification \
            Authority" since 2025 (sandbox from 20 January, production from 24 February), "AAA \
            Certificate Services" from 29 March 2021 until then. A root Apple has announced for a \
            later date is looked for too: --at a later date shows what will be needed then.

            Exit status: 0 the store holds the current root of every environment checked (and any \
            announced one); 1 a root is missing, current or announced, with the package or file to \
            fix it (a system with no trust store lacks them all); 2 a --ca-bundle or --ca file \
            cannot be read; 64 usage error.

            Examples:
              apnsctl trust
              apnsctl trust --environment production --json
              apnsctl trust --ca-bundle /etc/ssl/certs/ca-certificates.crt
            """
    )

    @Option(help: ArgumentHelp("Check this environment only (default: both).", valueName: "sandbox|production"))
    var environment: PushEnvironment?

    @Option(
        help: ArgumentHelp("Check this PEM bundle instead of the system's trust store.", valueName: "FILE"),
        completion: .pemFile
    )
    var caBundle: String?

    @Option(
        help: ArgumentHelp(
            "Also trust this CA certificate (PEM), as the connecting commands do. Repeatable.",
            valueName: "FILE"
        ),
        completion: .pemFile
    )
    var ca: [String] = []

    @Option(
        help: ArgumentHelp(
            "Judge at this date instead of now (YYYY-MM-DD or RFC 3339): which roots will be needed then.",
            valueName: "DATE"
        )
    )
    var at: String?

    @Flag(help: "Print a versioned JSON report.")
    var json = false

    func validate() throws {
        if let at, ReportOptions.parseDate(at) == nil {
            throw ValidationError("--at takes a date such as 2027-01-31 or 2027-01-31T12:00:00Z, not \"\(at)\".")
        }
    }

    func run() async throws {
        let check = try await withUserErrors {
            try TrustStoreCheck.run(
                environments: environment.map { [$0] } ?? PushEnvironment.allCases,
                caBundle: caBundle,
                caFiles: ca,
                at: at.flatMap(ReportOptions.parseDate) ?? Date()
            )
        }
        if json {
            try printJSON(TrustOutput(check: check))
        } else {
            print(TrustRenderer(style: .stdout).render(check))
        }
        if !check.ready || check.warning != nil { throw ExitStatus.problem }
    }
}

/// `trust --json`: the check, with the schema version on top.
struct TrustOutput: Encodable {
    var schemaVersion = ReportSchema.schemaVersion
    var check: TrustStoreCheck

    enum CodingKeys: String, CodingKey { case schemaVersion }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(schemaVersion, forKey: .schemaVersion)
        try check.encode(to: encoder)
    }
}
