import Foundation

extension TestPKI {
    /// A client CA and identities for each environment (sandbox, production, universal), minted
    /// by `apnsctl gateway mint-identity` as PKCS#12 files with `password`, and the local gateways
    /// that trust that CA.
    public final class Identities: @unchecked Sendable {
        /// The identities' password, handed to the program in the MINT environment variable.
        public static let password = "mint-pass"

        public let folder: TemporaryFolder
        public init() throws {
            folder = try TemporaryFolder()
            for (name, environment) in [("sandbox", "sandbox"), ("production", "production"), ("universal", "both")] {
                let result = try CLI.run(
                    [
                        "gateway", "mint-identity", "--topic", "com.example.app", "--environment", environment,
                        "--ca-dir", folder.path("ca"), "--out", folder.path("\(name).p12"), "--password-env", "MINT",
                    ],
                    environment: ["MINT": Self.password]
                )
                guard result.status == 0 else { throw CLIError(message: "mint-identity failed: \(result.stderr)") }
            }
        }
        public var clientCA: String { folder.path("ca/client-ca.pem") }
        public func identity(_ name: String) -> String { folder.path("\(name).p12") }

        public func gateway(_ environment: String, _ extra: [String] = []) throws -> GatewayProcess {
            try GatewayProcess(
                folder,
                name: "\(environment)-\(UUID().uuidString.prefix(8))",
                arguments: ["--environment", environment, "--client-ca", clientCA] + extra
            )
        }

        /// The identity as PEM (certificate and key), for clients such as curl and aioapns.
        public func pem(_ name: String) throws -> String {
            let pem = folder.path("\(name).pem")
            let result = try CLI.runProgram(
                "openssl",
                ["pkcs12", "-in", identity(name), "-nodes", "-out", pem, "-passin", "env:MINT"],
                environment: ["MINT": Self.password]
            )
            guard result.status == 0 else {
                throw CLIError(message: "openssl could not convert \(name).p12: \(result.stderr)")
            }
            return pem
        }

        public func run(_ arguments: [String]) throws -> CLI.Result {
            try CLI.run(arguments + ["--password-env", "MINT"], environment: ["MINT": Self.password])
        }
    }
}
