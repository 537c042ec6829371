import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import PushCore

/// A client of one Vault or OpenBao server: sends authenticated requests and turns Vault's
/// answers into ``VaultError``s in Vault's terms. ``kv(mount:)`` and ``transit(mount:)`` give
/// the engines' operations.
///
/// The token is kept as ``SecretBytes``: it goes into the `X-Vault-Token` header of each request
/// and nowhere else (no log, no error, no child process).
public final class VaultClient: Sendable {
    /// What the client was made with.
    public let configuration: VaultConfiguration
    let transport: VaultHTTPTransport
    /// The token AppRole login gave, until it is found expired.
    private let loginToken = NIOLockedValueBox<SecretBytes?>(nil)
    /// How many AppRole logins this client made (for tests).
    let logins = NIOLockedValueBox(0)
    /// KV mounts already checked to be version 2.
    let checkedMounts = NIOLockedValueBox<Set<String>>([])
    /// What the shared provider tokens of this client remember, by entry: every store opened
    /// with this client (an exporter's probe after probe) shares one, so a token of its own is
    /// signed once per refresh age, not once per use.
    private let tokenMemories = NIOLockedValueBox<[String: SharedTokenMemory]>([:])

    /// The memory of the shared token entry `name`.
    func tokenMemory(for name: String) -> SharedTokenMemory {
        tokenMemories.withLockedValue { memories in
            if let known = memories[name] { return known }
            let made = SharedTokenMemory()
            memories[name] = made
            return made
        }
    }

    /// A client for `configuration`; nothing is sent until the first request.
    public init(configuration: VaultConfiguration) throws {
        self.configuration = configuration
        transport = try VaultHTTPTransport(configuration: configuration)
    }

    /// A client configured from the environment (``VaultConfiguration/fromEnvironment(_:)``).
    public convenience init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        try self.init(configuration: VaultConfiguration.fromEnvironment(environment))
    }

    /// The server's address, as errors name it.
    public var address: String { configuration.address }

    /// Whether the server is sealed (`GET /v1/sys/seal-status`, which needs no token).
    public func isSealed() async throws -> Bool {
        let json = try await call(.GET, "sys/seal-status", capability: "read", authenticated: false)
        guard let sealed = json["sealed"].bool else {
            throw VaultError.badResponse(address: address, path: "sys/seal-status", reason: "no \"sealed\" field")
        }
        return sealed
    }

    /// Checks that the server answers, is unsealed and takes the token (`auth/token/lookup-self`).
    public func checkAccess() async throws {
        if try await isSealed() { throw VaultError.sealed(address: address, path: "sys/seal-status") }
        _ = try await call(.GET, "auth/token/lookup-self", capability: "read")
    }

    // MARK: - Requests

    /// What a request is about, for wording errors: which engine at which mount, and for a
    /// check-and-set write the version it expected.
    struct Context {
        var engine: Engine = .system
        var expectedVersion: Int?

        enum Engine {
            case system
            case kv(String)
            case transit(String)
        }
    }

    /// Sends a request to `path` (below `/v1/`, without a query) and returns the answer's JSON;
    /// an answer other than 2xx is thrown as a ``VaultError``. `capability` is what a policy must
    /// grant for it, named when permission is denied.
    func call(
        _ method: HTTPMethod,
        _ path: String,
        query: String? = nil,
        body: [String: Any]? = nil,
        capability: String,
        authenticated: Bool = true,
        timeout: Duration? = nil,
        context: Context = Context(),
        answerOfNotFound: Bool = false
    ) async throws -> VaultJSON {
        var retried = false
        while true {
            let token = authenticated ? try await currentToken() : nil
            let response = try await send(method, path, query: query, body: body, token: token, timeout: timeout)
            // KV version 2 answers a deleted or destroyed latest version with 404 and the
            // version's metadata, which says what a check-and-set write must name.
            if answerOfNotFound, response.status == 404, let json = VaultJSON(parsing: response.body),
                json["data"]["metadata"]["version"].int != nil
            {
                return json
            }
            if (200..<300).contains(response.status) {
                guard let json = VaultJSON(parsing: response.body) else {
                    throw VaultError.badResponse(address: address, path: path, reason: "the body is not JSON")
                }
                return json
            }
            let error = await describeFailure(response, path: path, capability: capability, token: token, context)
            // A token from AppRole login that expired: log in again, once.
            if error.code == .tokenInvalid, !retried, case .appRole = configuration.tokenSource {
                retried = true
                loginToken.withLockedValue { $0 = nil }
                continue
            }
            throw error
        }
    }

    /// One HTTP exchange, with transport failures worded as ``VaultError/Code/unreachable``.
    func send(
        _ method: HTTPMethod,
        _ path: String,
        query: String? = nil,
        body: [String: Any]?,
        token: SecretBytes?,
        timeout: Duration? = nil
    ) async throws -> VaultHTTPResponse {
        var headers: [(String, String)] = [("X-Vault-Request", "true")]
        if let token { headers.append(("X-Vault-Token", String(decoding: token.bytes, as: UTF8.self))) }
        if let namespace = configuration.namespace { headers.append(("X-Vault-Namespace", namespace)) }
        let target = "/v1/" + Self.escape(path) + (query.map { "?" + $0 } ?? "")
        let request = VaultHTTPRequest(
            method: method,
            target: target,
            headers: headers,
            body: body.map(VaultJSON.encode),
            timeout: timeout
        )
        do {
            return try await transport.send(request)
        } catch let failure as VaultTransportFailure {
            let reason: String
            switch failure {
            case .connect(let text): reason = text
            case .timedOut(let seconds): reason = "no answer within \(seconds) s"
            case .closedEarly: reason = "the connection closed before an answer"
            case .tooLarge: reason = "the answer is larger than \(VaultHTTPTransport.maximumBody) bytes"
            case .tls(let text): reason = text
            }
            throw VaultError.unreachable(address: address, path: path, reason: reason)
        }
    }

    /// Percent-escapes what a path segment may not hold, keeping `/`.
    static func escape(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#;%")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }

    /// The token for the next request, from the configured source.
    func currentToken() async throws -> SecretBytes {
        switch configuration.tokenSource {
        case .token(let token):
            try VaultConfiguration.checkToken(token, origin: "VAULT_TOKEN (or BAO_TOKEN)", address: address)
            return token
        case .file(let path):
            let setting = configuration.tokenFileSetting
            let token = try VaultConfiguration.readSecretFile(path, setting: setting, address: address)
            try VaultConfiguration.checkToken(
                token,
                origin: setting.map { "\($0) (\(path))" } ?? "the token file \(path)",
                address: address
            )
            return token
        case .appRole(let mount, let roleID, let secretID):
            if let token = loginToken.withLockedValue({ $0 }) { return token }
            let token = try await logIn(mount: mount, roleID: roleID, secretID: secretID)
            loginToken.withLockedValue { $0 = token }
            return token
        case .none:
            throw VaultError.tokenMissing(address: address)
        }
    }

    /// AppRole login: `POST auth/MOUNT/login` with the role ID and secret ID.
    func logIn(mount: String, roleID: SecretBytes, secretID: SecretBytes) async throws -> SecretBytes {
        let path = "auth/\(mount)/login"
        logins.withLockedValue { $0 += 1 }
        let body: [String: Any] = [
            "role_id": String(decoding: roleID.bytes, as: UTF8.self),
            "secret_id": String(decoding: secretID.bytes, as: UTF8.self),
        ]
        let response = try await send(.POST, path, body: body, token: nil)
        let json = VaultJSON(parsing: response.body) ?? VaultJSON(nil)
        if Self.isSealed(response, json) { throw VaultError.sealed(address: address, path: path) }
        guard (200..<300).contains(response.status) else {
            let reason = Self.scrub(json.errors.joined(separator: "; "), secrets: [roleID, secretID])
            throw VaultError.loginFailed(
                address: address,
                path: path,
                reason: reason.isEmpty ? "HTTP \(response.status)" : reason
            )
        }
        guard let token = json["auth"]["client_token"].string, !token.isEmpty else {
            throw VaultError.badResponse(
                address: address,
                path: path,
                reason: "no auth.client_token in the login answer"
            )
        }
        return SecretBytes(token)
    }

    // MARK: - Errors

    static func isSealed(_ response: VaultHTTPResponse, _ json: VaultJSON) -> Bool {
        response.status == 503 && json.errors.contains { $0.localizedCaseInsensitiveContains("is sealed") }
    }

    /// The error a non-2xx answer stands for.
    func describeFailure(
        _ response: VaultHTTPResponse,
        path: String,
        capability: String,
        token: SecretBytes?,
        _ context: Context
    ) async -> VaultError {
        let json = VaultJSON(parsing: response.body) ?? VaultJSON(nil)
        let errors = json.errors
        let said = Self.scrub(errors.joined(separator: "; "), secrets: token.map { [$0] } ?? [])
        if Self.isSealed(response, json) { return .sealed(address: address, path: path) }
        switch response.status {
        case 503 where path != "sys/seal-status":
            // A 503 in other words (a load balancer's, a standby's): the seal status says whether
            // it is the seal.
            if let status = try? await send(.GET, "sys/seal-status", body: nil, token: nil),
                VaultJSON(parsing: status.body)?["sealed"].bool == true
            {
                return .sealed(address: address, path: path)
            }
            return .rejected(address: address, path: path, status: 503, reason: said.isEmpty ? "unavailable" : said)
        case 403:
            // Vault answers an unknown or expired token with the same 403 as a missing
            // capability: the token's own lookup, which every token may do, tells them apart.
            guard let token else { return .permissionDenied(address: address, path: path, capability: capability) }
            if path != "auth/token/lookup-self",
                let lookup = try? await send(.GET, "auth/token/lookup-self", body: nil, token: token),
                lookup.status != 403
            {
                return .permissionDenied(address: address, path: path, capability: capability)
            }
            return .tokenInvalid(address: address, path: path)
        case 400 where errors.contains { $0.contains("check-and-set parameter did not match") }:
            return .casMismatch(address: address, path: path, expected: context.expectedVersion ?? 0)
        case 404:
            if errors.contains(where: { $0.contains("no handler for route") }) {
                switch context.engine {
                case .transit(let mount):
                    return .transitNotMounted(address: address, mount: mount, path: path)
                case .kv(let mount):
                    return .rejected(
                        address: address,
                        path: path,
                        status: 404,
                        reason: "no secrets engine is mounted at \(mount)/"
                    )
                case .system:
                    break
                }
            }
            return .notFound(address: address, path: path)
        default:
            if response.status >= 400, !errors.isEmpty || !json.isNull {
                return .rejected(
                    address: address,
                    path: path,
                    status: response.status,
                    reason: said.isEmpty ? "no reason given" : said
                )
            }
            return .badResponse(address: address, path: path, reason: "HTTP status \(response.status)")
        }
    }

    /// Vault's words, shortened, with any secret replaced (Vault does not echo tokens, but an
    /// error must never carry one even if a server did).
    static func scrub(_ text: String, secrets: [SecretBytes]) -> String {
        var result = text
        for secret in secrets where secret.count >= 4 {
            let value = String(decoding: secret.bytes, as: UTF8.self)
            result = result.replacingOccurrences(of: value, with: "<redacted>")
        }
        result = result.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
        while result.contains("  ") { result = result.replacingOccurrences(of: "  ", with: " ") }
        result = result.trimmingCharacters(in: .whitespaces)
        return result.count > 300 ? String(result.prefix(300)) + "…" : result
    }
}
