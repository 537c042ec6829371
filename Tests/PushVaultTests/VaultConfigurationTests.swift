import Foundation
import PushCore
import Testing

@testable import PushVault

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
