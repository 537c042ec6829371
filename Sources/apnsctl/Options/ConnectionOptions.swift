import ArgumentParser
import Foundation
import PushCredentials
import PushGateway

/// Which gateway to talk to and how to trust it.
struct ConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The APNs environment (default: the credential's own when it has one, else sandbox).", valueName: "sandbox|production"))
    var environment: PushEnvironment?

    @Option(help: ArgumentHelp("443 (default) or 2197, for networks that block 443.", valueName: "PORT"))
    var port: Int?

    @Option(help: ArgumentHelp("Any other gateway, such as `apnsctl gateway serve` (legacy gateway.push.apple.com names are mapped).", valueName: "HOST:PORT"))
    var gateway: String?

    @Option(help: ArgumentHelp("Also trust this CA certificate (PEM), e.g. the local gateway's --ca-out file. Repeatable.", valueName: "FILE"))
    var ca: [String] = []

    @Option(help: ArgumentHelp("HTTP CONNECT proxy (default: $HTTPS_PROXY).", valueName: "URL"))
    var proxy: String?

    @Option(help: ArgumentHelp("Seconds allowed for each phase (DNS, TCP, TLS, HTTP/2) and for each request.", valueName: "SECONDS"))
    var timeout: Double = 10

    func validate() throws {
        if let port, !(1...65535).contains(port) { throw ValidationError("--port must be between 1 and 65535.") }
        if !timeout.isFinite || timeout <= 0 || timeout > 3600 { throw ValidationError("--timeout must be more than 0 and at most 3600 seconds.") }
        if let proxy, URL(string: proxy)?.host == nil { throw ValidationError("--proxy takes a URL such as http://proxy.example.com:3128.") }
    }

    /// The environment to use: as given, else the credential's single environment, else sandbox.
    func chosenEnvironment(for credential: LoadedCredential) -> (PushEnvironment, note: String?) {
        if let environment { return (environment, nil) }
        if credential.environments.count == 1 { return (credential.environments[0], nil) }
        return (.sandbox, "No --environment given and the credential is for \(credential.environments.isEmpty ? "no known environment" : "both"); using sandbox.")
    }

    /// --proxy as given; else HTTPS_PROXY, except for loopback and the hosts NO_PROXY names.
    static func proxy(explicit: String?, for host: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL? {
        if let explicit { return URL(string: explicit) }
        guard let text = environment["HTTPS_PROXY"] ?? environment["https_proxy"], !text.isEmpty else { return nil }
        let lowered = host.lowercased()
        if ["localhost", "::1", "[::1]"].contains(lowered) || lowered.hasPrefix("127.") { return nil }
        let exclusions = (environment["NO_PROXY"] ?? environment["no_proxy"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        for entry in exclusions {
            if entry == "*" { return nil }
            let suffix = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if lowered == suffix || lowered.hasSuffix("." + suffix) { return nil }
        }
        guard let url = URL(string: text.contains("://") ? text : "http://" + text), url.host != nil else {
            throw CredentialError(.invalidArgument, path: nil, "HTTPS_PROXY is set to \"\(text)\", which is not a proxy URL.",
                                  hint: "Set it to e.g. http://proxy.example.com:3128, or unset it.")
        }
        return url
    }

    func configuration(for credential: LoadedCredential, environment: PushEnvironment) throws -> (GatewayConfiguration, [String]) {
        let resolution = try Endpoint.resolve(environment: environment, port: port, gateway: gateway)
        var configuration = GatewayConfiguration(endpoint: resolution.endpoint, credential: credential.client)
        configuration.caFiles = ca
        configuration.proxy = try Self.proxy(explicit: proxy, for: resolution.endpoint.host)
        configuration.timeouts.dns = timeout
        configuration.timeouts.connect = timeout
        configuration.timeouts.tls = timeout
        configuration.timeouts.http2 = timeout
        configuration.timeouts.request = max(timeout, 30)
        return (configuration, resolution.notices)
    }
}

/// How to find the credential: the store, or a file with its password (or, for a .p8, its IDs).
struct CredentialOptions: ParsableArguments {
    @OptionGroup var store: StoreOptions
    @OptionGroup var password: PasswordOptions

    @Option(name: .customLong("team-id"), help: ArgumentHelp("With a .p8 file: its team ID.", valueName: "TEAMID"))
    var teamID: String?

    @Option(name: .customLong("key-id"), help: ArgumentHelp("With a .p8 file: its key ID (default: from AuthKey_KEYID.p8).", valueName: "KEYID"))
    var keyID: String?

    func load(_ argument: String) throws -> LoadedCredential {
        let store = self.store.credentialStore
        switch try CredentialReference.resolve(argument, store: store) {
        case .stored(let stored) where stored.kind == .tokenKey:
            let key = try store.tokenKey(of: stored)
            return LoadedCredential(name: stored.alias, kind: .tokenKey, client: .token(key), environments: stored.environments,
                                    topics: stored.topics, certificate: nil)
        case .stored(let stored):
            let identity = try store.identity(of: stored)
            return try LoadedCredential(name: stored.alias, file: identity)
        case .file(let path) where path.lowercased().hasSuffix(".p8"):
            guard let teamID else {
                throw CredentialError(.invalidArgument, path: path, "A token key file needs its team ID.", hint: "Add --team-id TEAMID.")
            }
            let key = try ProviderKey(path: path, teamID: teamID, keyID: keyID)
            return LoadedCredential(name: path, kind: .tokenKey, client: .token(key), environments: [], topics: [], certificate: nil)
        case .file(let path):
            return try LoadedCredential(name: path, file: try CredentialFile.read(path: path, password: password.source()))
        }
    }
}

/// A credential ready to connect with.
struct LoadedCredential {
    var name: String
    var kind: StoredCredential.Kind
    var client: ClientCredential
    var environments: [PushEnvironment]
    var topics: [String]
    var certificate: CredentialFile?

    init(name: String, kind: StoredCredential.Kind, client: ClientCredential, environments: [PushEnvironment], topics: [String],
         certificate: CredentialFile?) {
        self.name = name
        self.kind = kind
        self.client = client
        self.environments = environments
        self.topics = topics
        self.certificate = certificate
    }

    init(name: String, file: CredentialFile) throws {
        guard let key = file.privateKeyPKCS8 else {
            throw CredentialError(.noPrivateKey, path: file.path, "The file holds a certificate but no private key, so it cannot authenticate to APNs.",
                                  hint: "Use the .p12 exported with its key, or a PEM with certificate and key.")
        }
        if file.privateKey?.matchesCertificate == false {
            throw CredentialError(.keyMismatch, path: file.path, "The private key in the file does not belong to its certificate, so TLS client authentication cannot work.",
                                  hint: "Export the certificate together with its own key.")
        }
        self.init(name: name, kind: .certificate,
                  client: .certificate(certificateDER: file.certificate.der, chainDER: file.chain.map(\.der), privateKey: key),
                  environments: file.certificate.environments, topics: file.certificate.coveredTopics, certificate: file)
    }

    /// The topic to push to unless told otherwise: the certificate's bundle ID, or the token
    /// key's first topic.
    var defaultTopic: String? {
        certificate?.certificate.bundleID ?? topics.first
    }

    /// Findings that predict a rejection, checked before connecting.
    func preflightFindings(environment: PushEnvironment, topic: String?, warnDays: Int = 30) -> [Finding] {
        let expectations = CheckExpectations(warnDays: warnDays, environment: environment, topic: topic)
        if let certificate {
            return CredentialCheck.certificate(certificate, name: name, origin: "file", keyVerified: true, expectations: expectations).findings
        }
        // A token key records no dates; what it was imported for is all there is to check.
        var findings = environments.isEmpty ? [] : CredentialCheck.environmentFindings(environments, expected: environment, what: "token key")
        if let topic, !topics.isEmpty, !topics.contains(topic) {
            findings.append(Finding(code: "topic_not_covered", severity: .problem,
                                    message: "The token key was imported for \(topics.joined(separator: ", ")), not for \(topic).",
                                    hint: "A token key can push to every app of its team; check that \(topic) belongs to it."))
        }
        return findings
    }
}

extension GatewayError {
    func print() {
        var text = TerminalStyle.stderr.paint("error:", .red, .bold) + " " + message
        if let hint { text += "\n  " + TerminalStyle.stderr.paint("hint:", .bold) + " " + hint }
        printError(text)
    }
}

/// Runs a command body, turning the libraries' errors into the project's messages and exit codes.
func withUserErrors<R>(_ body: () async throws -> R) async throws -> R {
    do {
        return try await body()
    } catch let error as CredentialError {
        reportError(error)
        throw ExitStatus.couldNotCheck
    } catch let error as GatewayError {
        error.print()
        throw ExitStatus.couldNotCheck
    } catch let error as PushCoreError {
        var text = TerminalStyle.stderr.paint("error:", .red, .bold) + " " + error.message
        let flag = error.subject.map { " (--\($0))" } ?? ""
        if let hint = error.hint { text += "\n  " + TerminalStyle.stderr.paint("hint:", .bold) + " " + hint + flag }
        printError(text)
        throw ExitStatus.couldNotCheck
    } catch let exit as ExitCode {
        throw exit
    } catch {
        printError(TerminalStyle.stderr.paint("error:", .red, .bold) + " \(error.localizedDescription)")
        throw ExitStatus.couldNotCheck
    }
}
