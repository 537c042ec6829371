import Foundation
import PushMonitoring
import TestSupport
import Testing

/// exporter-toolkit's web configuration as the exporter reads it: files relative to the
/// configuration, the client CA's default, a bcrypt hash made by Apache's htpasswd; and each
/// unusable field named in the error.
struct WebConfigTests {
    /// A folder with the test PKI's gateway server identity and `config` as web.yml.
    static func configuration(_ config: String) throws -> (folder: TemporaryFolder, path: String) {
        let folder = try TemporaryFolder()
        for name in ["server.pem", "server.key"] {
            try FileManager.default.copyItem(atPath: TestPaths.cert("gateway/\(name)"), toPath: folder.path(name))
        }
        try FileManager.default.copyItem(atPath: TestPaths.cert("ca/wwdr-test-ca.pem"), toPath: folder.path("ca.pem"))
        let path = folder.path("web.yml")
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return (folder, path)
    }

    /// The message of the error reading `path` gives.
    static func refusal(_ path: String) -> String? {
        do {
            _ = try WebConfig(contentsOf: path)
            Issue.record("\(path) was accepted")
            return nil
        } catch {
            return error.message
        }
    }

    @Test func filesAreReadRelativeToTheConfigurationAndAClientCAIsRequired() throws {
        let hash = try CLI.runProgram("htpasswd", ["-niB", "-C", "5", "prometheus"], stdin: "secret\n")
        try #require(hash.status == 0, "\(hash.stderr)")
        let line = hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let bcrypt = String(try #require(line.split(separator: ":", maxSplits: 1).last))
        let (folder, path) = try Self.configuration(
            """
            tls_server_config:
              cert_file: server.pem
              key_file: server.key
              client_ca_file: ca.pem
            basic_auth_users:
              prometheus: '\(bcrypt)'

            """
        )
        let config = try WebConfig(contentsOf: path)
        let tls = try #require(config.tls)
        #expect(tls.certFile == folder.path("server.pem"))
        #expect(tls.keyFile == folder.path("server.key"))
        #expect(tls.clientCAFile == folder.path("ca.pem"))
        #expect(tls.clientAuthType == "RequireAndVerifyClientCert", "a client CA alone requires a client certificate")
        #expect(config.basicAuthUsers == ["prometheus": bcrypt])
        #expect(config.requiresAuthentication)
    }

    @Test(
        arguments: [
            ("tls_server_config:\n  cert_file: server.pem\n", "tls_server_config.key_file"),
            ("basic_auth_users:\n  prometheus: secret\n", "basic_auth_users.prometheus"),
            ("http_server_config:\n  http2: true\n", "http_server_config"),
            ("tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  colour: red\n", "colour"),
        ]
    )
    func anUnusableFieldIsNamed(_ config: String, _ field: String) throws {
        let (folder, path) = try Self.configuration(config)
        let message = try withExtendedLifetime(folder) { try #require(Self.refusal(path)) }
        #expect(message.contains(path), "\(message)")
        #expect(message.contains(field), "\(message)")
    }

    @Test func aFileThatIsNotYAMLIsRefusedWithItsPath() throws {
        let (folder, path) = try Self.configuration("tls_server_config: [unclosed\n")
        let message = try withExtendedLifetime(folder) { try #require(Self.refusal(path)) }
        #expect(message.contains(path), "\(message)")
    }
}
