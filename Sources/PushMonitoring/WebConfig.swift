import Foundation
import NIOSSL
import PushCore
import Yams

/// A web configuration file in exporter-toolkit's format (`--web.config.file` of node_exporter
/// and blackbox_exporter): TLS, client certificates and basic authentication for the exporter.
///
/// ```yaml
/// tls_server_config:
///   cert_file: server.pem          # paths relative to this file
///   key_file: server-key.pem
///   client_ca_file: clients-ca.pem
///   client_auth_type: RequireAndVerifyClientCert
///   min_version: TLS12
/// basic_auth_users:
///   prometheus: $2y$10$...         # bcrypt, as htpasswd -B makes it
/// ```
public struct WebConfig: Sendable {
    public struct TLS: Sendable {
        public var certFile: String
        public var keyFile: String
        public var clientCAFile: String?
        public var clientAuthType: String
        public var minVersion: String?
        public var maxVersion: String?
    }

    /// The file read, as given.
    public var path: String
    public var tls: TLS?
    /// User name → bcrypt hash.
    public var basicAuthUsers: [String: String]

    /// What the exporter serves with: the TLS context and the users, made ready once at start.
    let serverContext: NIOSSLContext?
    let basicAuth: BasicAuth?

    public var requiresAuthentication: Bool { basicAuth != nil || tls?.clientAuthType == "RequireAndVerifyClientCert" }

    static let clientAuthTypes = ["NoClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"]
    static let unverifiedClientAuthTypes = ["RequestClientCert", "RequireAnyClientCert"]
    static let tlsVersions: [String: TLSVersion] = [
        "TLS10": .tlsv1, "TLS11": .tlsv11, "TLS12": .tlsv12, "TLS13": .tlsv13,
    ]

    /// Reads and checks `path`: every key known, every file readable, every hash bcrypt. The
    /// error names the file and the field.
    public init(contentsOf path: String) throws(MonitoringError) {
        self.path = path
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw MonitoringError.invalidWebConfig(path, nil, "cannot be read (\(UserFacing.describe(error)))")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw MonitoringError.invalidWebConfig(path, nil, "is not YAML: \(error)")
        }
        let top = try Self.mapping(
            root,
            path,
            nil,
            allowed: ["tls_server_config", "basic_auth_users", "http_server_config"]
        )
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        if top["http_server_config"] != nil {
            throw MonitoringError.invalidWebConfig(
                path,
                "http_server_config",
                "is not supported by this exporter: remove it (it serves HTTP/1.1)"
            )
        }
        if let tlsNode = top["tls_server_config"] {
            let fields = try Self.mapping(
                tlsNode,
                path,
                "tls_server_config",
                allowed: ["cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version", "max_version"]
            )
            func file(_ key: String) throws(MonitoringError) -> String? {
                guard let value = fields[key] else { return nil }
                let relative = try Self.string(value, path, "tls_server_config.\(key)")
                return relative.hasPrefix("/") ? relative : folder.appendingPathComponent(relative).path
            }
            guard let cert = try file("cert_file") else {
                throw MonitoringError.invalidWebConfig(
                    path,
                    "tls_server_config.cert_file",
                    "is missing: name the server's certificate (PEM)"
                )
            }
            guard let key = try file("key_file") else {
                throw MonitoringError.invalidWebConfig(
                    path,
                    "tls_server_config.key_file",
                    "is missing: name the server's private key (PEM)"
                )
            }
            let clientCA = try file("client_ca_file")
            let authType = try fields["client_auth_type"].map { value throws(MonitoringError) in
                try Self.string(value, path, "tls_server_config.client_auth_type")
            }
            let minVersion = try fields["min_version"].map { value throws(MonitoringError) in
                try Self.string(value, path, "tls_server_config.min_version")
            }
            let maxVersion = try fields["max_version"].map { value throws(MonitoringError) in
                try Self.string(value, path, "tls_server_config.max_version")
            }
            tls = TLS(
                certFile: cert,
                keyFile: key,
                clientCAFile: clientCA,
                clientAuthType: authType ?? (clientCA == nil ? "NoClientCert" : "RequireAndVerifyClientCert"),
                minVersion: minVersion,
                maxVersion: maxVersion
            )
        } else {
            tls = nil
        }
        var users: [String: String] = [:]
        if let usersNode = top["basic_auth_users"] {
            let fields = try Self.mapping(usersNode, path, "basic_auth_users", allowed: nil)
            for (user, hashNode) in fields {
                let hash = try Self.string(hashNode, path, "basic_auth_users.\(user)")
                guard BasicAuth.isUsableHash(hash) else {
                    throw MonitoringError.invalidWebConfig(
                        path,
                        "basic_auth_users.\(user)",
                        "is not a bcrypt hash ($2y$, $2b$ or $2a$): make one with htpasswd -nB \(user)"
                    )
                }
                users[user] = hash
            }
        }
        basicAuthUsers = users
        basicAuth = users.isEmpty ? nil : BasicAuth(users: users)
        serverContext = try tls.map { tls throws(MonitoringError) in try Self.context(tls, path) }
    }

    static func context(_ tls: TLS, _ path: String) throws(MonitoringError) -> NIOSSLContext {
        func field(_ name: String) -> String { "tls_server_config.\(name)" }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(tls.certFile)
        } catch {
            throw MonitoringError.invalidWebConfig(
                path,
                field("cert_file"),
                "\(tls.certFile) is not a readable PEM certificate (\(error))"
            )
        }
        guard !chain.isEmpty else {
            throw MonitoringError.invalidWebConfig(path, field("cert_file"), "\(tls.certFile) holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: tls.keyFile, format: .pem)
        } catch {
            throw MonitoringError.invalidWebConfig(
                path,
                field("key_file"),
                "\(tls.keyFile) is not a readable PEM private key (\(error))"
            )
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        if WebConfig.unverifiedClientAuthTypes.contains(tls.clientAuthType) {
            throw MonitoringError.invalidWebConfig(
                path,
                field("client_auth_type"),
                "\(tls.clientAuthType) is not supported: an unverified client certificate proves nothing; use VerifyClientCertIfGiven or RequireAndVerifyClientCert with client_ca_file"
            )
        }
        guard clientAuthTypes.contains(tls.clientAuthType) else {
            throw MonitoringError.invalidWebConfig(
                path,
                field("client_auth_type"),
                "\(Untrusted.display(tls.clientAuthType)) is not one of \(clientAuthTypes.joined(separator: ", "))"
            )
        }
        if tls.clientAuthType != "NoClientCert" {
            guard let caFile = tls.clientCAFile else {
                throw MonitoringError.invalidWebConfig(
                    path,
                    field("client_ca_file"),
                    "is missing: \(tls.clientAuthType) verifies clients against it"
                )
            }
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw MonitoringError.invalidWebConfig(
                    path,
                    field("client_ca_file"),
                    "\(caFile) is not a readable PEM certificate (\(error))"
                )
            }
            configuration.certificateVerification =
                tls.clientAuthType == "RequireAndVerifyClientCert" ? .noHostnameVerification : .optionalVerification
        }
        for (name, value) in [("min_version", tls.minVersion), ("max_version", tls.maxVersion)] {
            guard let value else { continue }
            guard let version = tlsVersions[value] else {
                throw MonitoringError.invalidWebConfig(
                    path,
                    field(name),
                    "\(Untrusted.display(value)) is not one of TLS10, TLS11, TLS12, TLS13"
                )
            }
            if name == "min_version" {
                configuration.minimumTLSVersion = version
            } else {
                configuration.maximumTLSVersion = version
            }
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw MonitoringError.invalidWebConfig(
                path,
                field("key_file"),
                "does not make a TLS server with cert_file (\(error)): is it the certificate's key?"
            )
        }
    }

    /// A mapping's keys and values, in the file's order.
    struct Fields: Sequence {
        var pairs: [(String, Node)] = []
        subscript(_ key: String) -> Node? { pairs.first { $0.0 == key }?.1 }
        func makeIterator() -> IndexingIterator<[(String, Node)]> { pairs.makeIterator() }
    }

    /// A mapping's string keys and values; `allowed` nil takes any key.
    static func mapping(
        _ node: Node?,
        _ path: String,
        _ field: String?,
        allowed: [String]?
    ) throws(MonitoringError) -> Fields {
        guard let node else { return Fields() }
        if case .scalar(let scalar) = node, ["", "~", "null"].contains(scalar.string) { return Fields() }
        guard let mapping = node.mapping else {
            throw MonitoringError.invalidWebConfig(path, field, "is not a mapping of keys to values")
        }
        var fields = Fields()
        for (keyNode, value) in mapping {
            let key = keyNode.string ?? ""
            let named = field.map { "\($0).\(key)" } ?? key
            if let allowed, !allowed.contains(key) {
                throw MonitoringError.invalidWebConfig(
                    path,
                    named,
                    "is not a known key: expected one of \(allowed.joined(separator: ", "))"
                )
            }
            fields.pairs.append((key, value))
        }
        return fields
    }

    static func string(_ node: Node, _ path: String, _ field: String) throws(MonitoringError) -> String {
        guard case .scalar(let scalar) = node, !scalar.string.isEmpty else {
            throw MonitoringError.invalidWebConfig(path, field, "must be a non-empty string")
        }
        return scalar.string
    }
}
