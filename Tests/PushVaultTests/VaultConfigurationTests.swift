import Foundation
import NIOHTTP1
import PushCore
import Testing

@testable import PushVault

#if canImport(Glibc)
import Glibc
#endif

/// Configuration from the environment, error wording and the key wrap: no server needed.
@Suite("Vault configuration, errors and key wrap")
struct VaultConfigurationTests {
    @Test("VAULT_ names win over BAO_ ones, which are used alone")
    func vaultAndBaoNames() throws {
        let both = try VaultConfiguration.fromEnvironment([
            "VAULT_ADDR": "https://vault.example.com:8200", "BAO_ADDR": "https://bao.example.com",
            "BAO_TOKEN": "s.bao", "BAO_NAMESPACE": "team-a", "VAULT_CACERT": "/etc/ca.pem",
        ])
        #expect(both.address == "https://vault.example.com:8200")
        #expect(both.host == "vault.example.com")
        #expect(both.port == 8200)
        #expect(both.namespace == "team-a")
        #expect(both.caFile == "/etc/ca.pem")
        guard case .token(let token) = both.tokenSource else {
            Issue.record("expected a token, got \(both.tokenSource)")
            return
        }
        #expect(token == SecretBytes("s.bao"))
        let bao = try VaultConfiguration.fromEnvironment(["BAO_ADDR": "https://bao.example.com/"])
        #expect(bao.address == "https://bao.example.com")
        #expect(bao.port == 443)
        let none = try VaultConfiguration.fromEnvironment([:])
        #expect(none.address == VaultConfiguration.defaultAddress)
    }

    @Test("The token comes from the value, the token file, AppRole, then ~/.vault-token")
    func tokenPrecedence() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try "s.helper\n".write(to: home.appendingPathComponent(".vault-token"), atomically: true, encoding: .utf8)
        let secretFile = home.appendingPathComponent("secret-id").path
        try " the-secret-id \n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let base = ["VAULT_ADDR": "http://127.0.0.1:8200", "HOME": home.path]

        let helper = try VaultConfiguration.fromEnvironment(base)
        guard case .file(let path) = helper.tokenSource else {
            Issue.record("expected ~/.vault-token, got \(helper.tokenSource)")
            return
        }
        #expect(path == home.appendingPathComponent(".vault-token").path)

        var appRole = base
        appRole["VAULT_ROLE_ID"] = "role"
        appRole["VAULT_SECRET_ID_FILE"] = secretFile
        guard
            case .appRole(let mount, let roleID, let secretID) = try VaultConfiguration.fromEnvironment(appRole)
                .tokenSource
        else {
            Issue.record("expected AppRole")
            return
        }
        #expect(mount == "approle")
        #expect(roleID == SecretBytes("role"))
        #expect(secretID == SecretBytes("the-secret-id"))

        var file = appRole
        file["BAO_TOKEN_FILE"] = "/run/agent/token"
        guard case .file("/run/agent/token") = try VaultConfiguration.fromEnvironment(file).tokenSource else {
            Issue.record("expected the token file")
            return
        }
        var value = file
        value["VAULT_TOKEN"] = "s.value"
        guard case .token = try VaultConfiguration.fromEnvironment(value).tokenSource else {
            Issue.record("expected the token value")
            return
        }

        var halfRole = base
        halfRole["VAULT_ROLE_ID"] = "role"
        #expect(throws: VaultError.self) { try VaultConfiguration.fromEnvironment(halfRole) }
    }

    @Test(
        "VAULT_TOKEN_FILE as a FIFO or /dev/zero is refused at once, naming the variable; a token with a line break is malformed",
        .timeLimit(.minutes(1))
    )
    func tokenFileBounds() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("agent-sink").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let broken = folder.appendingPathComponent("two-lines").path
        try "s.first-half\nsecond-half\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let large = folder.appendingPathComponent("large").path
        try Data(repeating: 0x41, count: 65 * 1024).write(to: URL(fileURLWithPath: large))
        // Nothing listens on port 1: a request that got as far as connecting would be "unreachable".
        let address = "http://127.0.0.1:1"

        /// The error of one authenticated request with `environment`.
        func failure(_ environment: [String: String]) async throws -> VaultError? {
            let client = try VaultClient(environment: ["VAULT_ADDR": address].merging(environment) { $1 })
            return await #expect(throws: VaultError.self) {
                _ = try await client.call(.GET, "auth/token/lookup-self", capability: "read")
            }
        }
        for (variable, path) in [("VAULT_TOKEN_FILE", fifo), ("BAO_TOKEN_FILE", "/dev/zero")] {
            let error = try await failure([variable: path])
            #expect(error?.code == .invalidConfiguration, "\(String(describing: error))")
            #expect(error?.message.contains("\(variable) names \(path)") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("not a regular file") == true)
            #expect(error?.hint?.contains(variable) == true)
        }
        let tooLarge = try await failure(["VAULT_TOKEN_FILE": large])
        #expect(tooLarge?.code == .invalidConfiguration)
        #expect(tooLarge?.message.contains("more than the 64 KiB") == true, "\(tooLarge?.message ?? "")")

        for environment in [["VAULT_TOKEN_FILE": broken], ["VAULT_TOKEN": "s.first-half\nsecond-half"]] {
            let error = try await failure(environment)
            #expect(error?.code == .invalidConfiguration, "\(String(describing: error))")
            #expect(error?.message.contains("malformed") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("a line break") == true)
            #expect(error?.message.contains("cannot be reached") == false)
            #expect(error?.message.contains("first-half") == false, "the token never appears in an error")
        }
        let named = try await failure(["VAULT_TOKEN_FILE": broken])
        #expect(named?.message.contains("VAULT_TOKEN_FILE (\(broken))") == true, "\(named?.message ?? "")")
        // A token file that ends in a line break, as `vault login` and Vault Agent write it, is fine.
        try "s.one-line\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let client = try VaultClient(environment: ["VAULT_ADDR": address, "VAULT_TOKEN_FILE": broken])
        #expect(try await client.currentToken() == SecretBytes("s.one-line"))
    }

    @Test("Plain http is refused to any but a loopback address")
    func plainHTTPOnlyOnLoopback() throws {
        #expect(throws: Never.self) { try VaultConfiguration(address: "http://127.0.0.1:8200", tokenSource: .none) }
        #expect(throws: Never.self) { try VaultConfiguration(address: "http://[::1]:8200", tokenSource: .none) }
        #expect(throws: Never.self) { try VaultConfiguration(address: "http://localhost:8200", tokenSource: .none) }
        let error = #expect(throws: VaultError.self) {
            try VaultConfiguration(address: "http://vault.example.com:8200", tokenSource: .none)
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(throws: VaultError.self) { try VaultConfiguration(address: "vault.example.com", tokenSource: .none) }
    }

    @Test("An error names code, server, path and capability, and compares by code and subject")
    func errorShape() {
        let error = VaultError.permissionDenied(address: "https://v:8200", path: "secret/data/a", capability: "create")
        #expect(error.code == .permissionDenied)
        #expect(error.code.name == "vault_permission_denied")
        #expect(error.subject.path == "secret/data/a")
        #expect(error.subject.capability == "create")
        #expect(error.location.hasPrefix("PushVaultTests/"))
        #expect("\(error)".contains("\"create\" on secret/data/a"))
        let same = VaultError.permissionDenied(address: "https://v:8200", path: "secret/data/a", capability: "create")
        #expect(error == same)
        #expect(error != VaultError.notFound(address: "https://v:8200", path: "secret/data/a"))
    }

    @Test("Vault's words are scrubbed of the token")
    func scrub() {
        let token = SecretBytes("s.abcdefghijklmnop")
        let said = VaultClient.scrub("1 error occurred:\n\t* bad token s.abcdefghijklmnop\n\n", secrets: [token])
        #expect(said == "1 error occurred: * bad token <redacted>")
    }

    /// RFC 5649 section 6's two examples (a 192-bit KEK).
    @Test("AES key wrap with padding matches RFC 5649's examples")
    func keyWrapWithPadding() throws {
        let kek = bytes("5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8")
        let twenty = try TransitKeyWrap.aesKeyWrapWithPadding(
            key: kek,
            plaintext: bytes("c37b7e6492584340bed12207808941155068f738")
        )
        #expect(twenty == bytes("138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a"))
        let seven = try TransitKeyWrap.aesKeyWrapWithPadding(key: kek, plaintext: bytes("466f7250617369"))
        #expect(seven == bytes("afbeb0f07dfbf5419200f2ccb50bb24f"))
    }

    @Test("The shared token's refresh age must be 20 to 50 minutes")
    func refreshAgeBounds() throws {
        let client = try VaultClient(
            configuration: VaultConfiguration(address: "http://127.0.0.1:1", tokenSource: .none)
        )
        for minutes in [19.0, 51.0] {
            #expect(throws: VaultError.self) {
                try SharedProviderToken(
                    kv: client.kv(),
                    transit: client.transit(),
                    keyID: "ABC123DEFG",
                    teamID: "TEAM123456",
                    refreshAge: minutes * 60
                )
            }
        }
        let shared = try SharedProviderToken(
            kv: client.kv(),
            transit: client.transit(),
            keyID: "ABC123DEFG",
            teamID: "TEAM123456"
        )
        #expect(shared.path == "apnsctl/tokens/ABC123DEFG")
        #expect(shared.transitKey == "apns-ABC123DEFG")
    }
}

func bytes(_ hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        result.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return result
}
