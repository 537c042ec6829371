import ArgumentParser
import CredentialFormats
import Foundation
import LocalGateway
import PushStore

#if canImport(Glibc)
import Glibc
#endif

extension Gateway {
    struct MintIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mint-identity",
            abstract: "Mint a TEST push identity signed by the local gateway's client CA, as a .p12.",
            discussion: """
                The identity carries Apple's environment extensions and topics extension, so every \
                apnsctl command treats it like a real push certificate; only the local gateway (started \
                with --client-ca DIR/client-ca.pem) trusts it. The CA is created in --ca-dir on first use.

                Exit status: 0 minted and written (over an existing --out); 2 nothing written: no \
                password given, the CA in --ca-dir unreadable or not writable, --out not writable; 64 \
                usage error.

                Examples. The .p12 password is in the environment variable P12_PASSWORD.
                  apnsctl gateway mint-identity --topic com.example.app --environment both \\
                    --ca-dir gw --out app.p12 --password-env P12_PASSWORD
                """
        )

        @Option(help: ArgumentHelp("The bundle ID (the certificate's UID and first topic).", valueName: "BUNDLE"))
        var topic: String

        @Option(help: ArgumentHelp("The environments the identity is good for.", valueName: "sandbox|production|both"))
        var environment: EnvironmentScope

        @Option(
            help: ArgumentHelp("Where to write the .p12.", valueName: "FILE"),
            completion: .file(extensions: ["p12"])
        )
        var out: String

        @Option(
            help: ArgumentHelp(
                "Folder holding client-ca.pem and client-ca.key (created when missing).",
                valueName: "DIR"
            ),
            completion: .directory
        )
        var caDir: String

        @Option(help: ArgumentHelp("Days of validity.", valueName: "N"))
        var days = 395

        func validate() throws {
            if !(1...36_500).contains(days) { throw ValidationError("--days is between 1 and 36500.") }
        }

        @Option(help: ArgumentHelp("The team ID to put in the certificate (OU).", valueName: "TEAMID"))
        var teamID = "ABCDE12345"

        @Flag(help: "Write a Keychain-style RC2-40/3DES bundle instead of AES-256.")
        var legacy = false

        @OptionGroup(title: "Password for the .p12") var password: PasswordOptions

        func run() async throws {
            try await withUserErrors {
                guard
                    let secret = try password.source(prompt: "New password")(
                        PasswordRequest(path: out, what: "new PKCS#12")
                    )
                else {
                    throw CredentialError(
                        .passwordRequired,
                        path: out,
                        "The new .p12 needs a password.",
                        hint: "Give it with --password-stdin, --password-env NAME or --password-file PATH."
                    )
                }
                let bytes = try LocalGateway.mintIdentityBundle(
                    topic: topic,
                    environments: environment.environments,
                    teamID: teamID,
                    days: days,
                    caFolder: caDir,
                    password: secret,
                    style: legacy ? .legacy : .modern
                )
                try PrivateFile.write(bytes, to: out, overwrite: true)
                print(
                    "Minted a TEST \(environment.rawValue) identity for \(topic) → \(out) (signed by \(caDir)/client-ca.pem; not valid with Apple)."
                )
            }
        }
    }
}
