import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a Vault (or OpenBao) server is and how to authenticate to it, read from the
/// environment the way Vault's own clients read it.
///
/// Each setting has a `VAULT_` name and a `BAO_` name; the `VAULT_` one is used when both are
/// set. See docs/vault.md for the whole list.
public struct VaultConfiguration: Sendable {
    /// Where the token comes from.
    public enum TokenSource: Sendable, CustomStringConvertible {
        /// A token given as a value (`VAULT_TOKEN`).
        case token(SecretBytes)
        /// A file holding the token, read again for every request so that a renewed token
        /// (Vault Agent's sink file) is picked up: `VAULT_TOKEN_FILE`, or `~/.vault-token`.
        case file(String)
        /// AppRole login at `auth/MOUNT/login` with a role ID and a secret ID.
        case appRole(mount: String, roleID: SecretBytes, secretID: SecretBytes)
        /// None was found: every request fails with ``VaultError/Code/tokenMissing``.
        case none

        /// Where the token comes from, never the token.
        public var description: String {
            switch self {
            case .token: return "a token"
            case .file(let path): return "the token file \(path)"
            case .appRole(let mount, _, _): return "AppRole login at auth/\(mount)/login"
            case .none: return "no token"
            }
        }
    }

    /// The server's address as given (`https://vault.example.com:8200`), without a trailing
    /// slash: what errors name.
    public var address: String
    /// `http` or `https`.
    public var scheme: String
    /// The host name or IP address.
    public var host: String
    /// The TCP port.
    public var port: Int
    /// A path prefix before `/v1/` when the server is behind a path (usually empty).
    public var pathPrefix: String
    /// A PEM file of the CA certificates to trust instead of the system's (`VAULT_CACERT`).
    public var caFile: String?
    /// The Vault Enterprise / OpenBao namespace, sent as `X-Vault-Namespace`.
    public var namespace: String?
    /// Where the token comes from.
    public var tokenSource: TokenSource
    /// The variable that named the token file (`VAULT_TOKEN_FILE` or `BAO_TOKEN_FILE`), for
    /// messages about it; nil for `~/.vault-token` or a file given in code.
    public var tokenFileSetting: String?
    /// How long a TCP (and TLS) connection may take.
    public var connectTimeout: Duration
    /// How long a whole request may take, connecting included: 3.5 s by default, so that a
    /// server that is down or hangs is reported within 5 s.
    public var requestTimeout: Duration

    /// Vault's default address when `VAULT_ADDR` is not set, as the vault CLI has it.
    public static let defaultAddress = "https://127.0.0.1:8200"

    /// A configuration for `address` (a URL: `https://host:port`; `http` only to a loopback
    /// address, so that a token never crosses a network in clear).
    public init(
        address: String,
        tokenSource: TokenSource,
        caFile: String? = nil,
        namespace: String? = nil,
        connectTimeout: Duration = .seconds(3),
        requestTimeout: Duration = .milliseconds(3500)
    ) throws {
        var text = address.trimmingCharacters(in: .whitespaces)
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw VaultError.invalidConfiguration(
                address: text,
                "The Vault address \"\(text)\" is not an http(s) URL.",
                hint: "Set VAULT_ADDR to the server's URL, such as https://vault.example.com:8200."
            )
        }
        let unbracketed = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if scheme == "http" && !Self.isLoopback(unbracketed) {
            throw VaultError.invalidConfiguration(
                address: text,
                "Plain http is accepted only to a loopback address; \(host) would receive the token in clear.",
                hint: "Use https:// (with VAULT_CACERT for a private CA)."
            )
        }
        self.address = text
        self.scheme = scheme
        self.host = unbracketed
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
        self.pathPrefix = url.path
        self.caFile = caFile
        self.namespace = namespace
        self.tokenSource = tokenSource
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
    }

    /// Reads the configuration from `environment` (normally `ProcessInfo.processInfo.environment`).
    ///
    /// - Address: `VAULT_ADDR` or `BAO_ADDR`, else ``defaultAddress``.
    /// - Token, the first found of: `VAULT_TOKEN`/`BAO_TOKEN`; the file named by
    ///   `VAULT_TOKEN_FILE`/`BAO_TOKEN_FILE`; AppRole login with `VAULT_ROLE_ID` (or
    ///   `VAULT_ROLE_ID_FILE`) and `VAULT_SECRET_ID` (or `VAULT_SECRET_ID_FILE`) at
    ///   `auth/VAULT_APPROLE_MOUNT/login` (default `approle`); `~/.vault-token`, where the vault
    ///   CLI's token helper keeps the token of `vault login`.
    /// - `VAULT_CACERT`/`BAO_CACERT`: a PEM file of CA certificates.
    /// - `VAULT_NAMESPACE`/`BAO_NAMESPACE`: sent as `X-Vault-Namespace`.
    public static func fromEnvironment(_ environment: [String: String]) throws -> VaultConfiguration {
        func setting(_ name: String) -> String? {
            for prefix in ["VAULT_", "BAO_"] {
                if let value = environment[prefix + name], !value.isEmpty { return prefix + name }
            }
            return nil
        }
        func value(_ name: String) -> String? { setting(name).flatMap { environment[$0] } }
        let address = value("ADDR") ?? defaultAddress
        let source: TokenSource
        if let token = value("TOKEN") {
            source = .token(SecretBytes(token.trimmingCharacters(in: .whitespacesAndNewlines)))
        } else if let file = value("TOKEN_FILE") {
            source = .file(file)
        } else if let roleID = try secret(
            value("ROLE_ID"),
            file: value("ROLE_ID_FILE"),
            setting: setting("ROLE_ID_FILE"),
            address: address
        ) {
            guard
                let secretID = try secret(
                    value("SECRET_ID"),
                    file: value("SECRET_ID_FILE"),
                    setting: setting("SECRET_ID_FILE"),
                    address: address
                )
            else {
                throw VaultError.invalidConfiguration(
                    address: address,
                    "An AppRole role ID is set, but no secret ID.",
                    hint: "Set VAULT_SECRET_ID or VAULT_SECRET_ID_FILE beside VAULT_ROLE_ID."
                )
            }
            source = .appRole(mount: value("APPROLE_MOUNT") ?? "approle", roleID: roleID, secretID: secretID)
        } else if let home = environment["HOME"], !home.isEmpty,
            FileManager.default.fileExists(atPath: home + "/.vault-token")
        {
            source = .file(home + "/.vault-token")
        } else {
            source = .none
        }
        var configuration = try VaultConfiguration(
            address: address,
            tokenSource: source,
            caFile: value("CACERT"),
            namespace: value("NAMESPACE")
        )
        if value("TOKEN") == nil { configuration.tokenFileSetting = setting("TOKEN_FILE") }
        return configuration
    }

    /// A secret given as a value or in a file (the file wins when both are set: a value in the
    /// environment is the weaker place for it).
    static func secret(_ value: String?, file: String?, setting: String?, address: String) throws -> SecretBytes? {
        if let file { return try readSecretFile(file, setting: setting, address: address) }
        return value.map { SecretBytes($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The most read of a token or ID file: a token is under 200 bytes.
    static let secretFileLimit = 64 << 10

    /// A small secret file's contents without surrounding white space; `setting` is the
    /// variable that named it, for messages.
    ///
    /// Only a regular file is read, opened without waiting and read to at most
    /// ``secretFileLimit`` bytes: a FIFO would block until someone writes into it (every request
    /// reads the token file again) and a device such as /dev/zero never ends.
    static func readSecretFile(_ path: String, setting: String?, address: String) throws -> SecretBytes {
        let named = setting.map { "\($0) names \(path)" } ?? "The file \(path)"
        let fix =
            setting.map {
                "Point \($0) at a file holding only the secret (Vault Agent's sink file is one), or unset it."
            }
            ?? "Write the secret alone into the file, or remove it."
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw VaultError.invalidConfiguration(
                address: address,
                "\(named), which cannot be read (\(reason)).",
                hint: "Check the path and that this user may read it."
            )
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw VaultError.invalidConfiguration(
                address: address,
                "\(named), which is not a regular file (a FIFO, a device or a folder); a secret is read only from a regular file, so that reading it can never wait or go on without end.",
                hint: fix
            )
        }
        guard Int(status.st_size) <= secretFileLimit else {
            throw VaultError.invalidConfiguration(
                address: address,
                "\(named), which holds \(status.st_size) bytes, more than the \(secretFileLimit >> 10) KiB a token or ID file may (a token is under 200 bytes).",
                hint: fix
            )
        }
        var bytes = [UInt8](repeating: 0, count: secretFileLimit + 1)
        var total = 0
        defer { for index in bytes.indices { bytes[index] = 0 } }
        while total < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + total, $0.count - total) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            total += count
        }
        guard total <= secretFileLimit else {
            throw VaultError.invalidConfiguration(
                address: address,
                "\(named), which goes on past the \(secretFileLimit >> 10) KiB a token or ID file may hold.",
                hint: fix
            )
        }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let content = bytes[0..<total]
        guard let first = content.firstIndex(where: { !isSpace($0) }),
            let last = content.lastIndex(where: { !isSpace($0) })
        else {
            throw VaultError.invalidConfiguration(
                address: address,
                "\(named), which is empty.",
                hint: "Write the secret into it, or unset the variable that names it."
            )
        }
        return SecretBytes(Array(content[first...last]))
    }

    /// Checks that `token` can be sent as `X-Vault-Token`: one line of printable ASCII, as every
    /// Vault and OpenBao token is. `origin` says where it came from, for the message.
    static func checkToken(_ token: SecretBytes, origin: String, address: String) throws {
        guard token.bytes.contains(where: { $0 < 0x21 || $0 > 0x7E }) else { return }
        let breaks = token.bytes.contains { $0 == 0x0A || $0 == 0x0D }
        throw VaultError.invalidConfiguration(
            address: address,
            "The Vault token from \(origin) is malformed: it holds \(breaks ? "a line break" : "a space or a character that is not printable ASCII"), which no Vault token has (a token is one line of letters, digits and . _ -).",
            hint: "Put the token alone on one line (as Vault Agent's sink and vault login write it), or log in again."
        )
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
