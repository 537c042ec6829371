import CredentialFormats
import Foundation

extension LocalGateway {
    /// A provider-token key the gateway accepts, named by the file of its public half.
    public struct TokenKeySource: Sendable {
        public var keyID: String
        public var teamID: String
        /// The P-256 public key as PEM (`openssl pkey -in AuthKey_KEYID.p8 -pubout`).
        public var publicKeyFile: String
        /// See ``Configuration/TokenKey/environment``.
        public var environment: PushEnvironment?
        /// See ``Configuration/TokenKey/topics``.
        public var topics: [String]

        public init(
            keyID: String,
            teamID: String,
            publicKeyFile: String,
            environment: PushEnvironment? = nil,
            topics: [String] = []
        ) {
            self.keyID = keyID
            self.teamID = teamID
            self.publicKeyFile = publicKeyFile
            self.environment = environment
            self.topics = topics
        }
    }

    /// The files ``serve(_:files:until:onListening:)`` reads before the gateway starts and
    /// writes around its run.
    public struct ServeFiles: Sendable {
        /// Token keys read from their public-key files, added to the configuration's.
        public var tokenKeys: [TokenKeySource] = []
        /// What named the public-key files, for an error about one ("--token-key", say).
        public var tokenKeysNamedBy: String?
        /// Where to write the generated server CA for clients to trust. A certificate, public:
        /// written readable by other users (as the umask allows), unlike the other files.
        public var certificateAuthority: String?
        /// Replace an existing ``certificateAuthority`` file. Off, one is refused before the
        /// gateway starts: a CA that clients already trust is not silently replaced.
        public var replaceCertificateAuthority = false
        /// Where to write the port once listening (mode 0600), for scripts.
        public var port: String?
        /// Where to write ``Statistics`` as JSON once stopped (mode 0600), with what each device
        /// would show and the streams in flight over time (``StatisticsFile``): given, both are
        /// followed.
        public var statistics: String?
        /// Where to write, once stopped, each device's notifications a person would see, one JSON
        /// line per device (mode 0600); given, the device display is followed.
        public var shown: String?

        public init() {}
    }

    /// Serves `configuration` until `stop` says so, and returns what the gateway counted.
    ///
    /// In order: the token keys' public keys are read; an existing CA file is refused (unless
    /// it may be replaced); the gateway reads its files; `stop` is called, once, to start
    /// watching for the stop; the CA file is written; the gateway starts; the port file is
    /// written; `onListening` is told the port; the gateway waits for the value `stop` returned,
    /// stops (GOAWAY, answers owed, close) and writes the statistics and shown files.
    ///
    /// So a watch that `stop` sets up (SIGTERM, say) is in place before any file says the
    /// gateway is up, and a signal sent as soon as the port file appears stops it rather than
    /// being lost; and the CA file is there before the port file, so a client that waits for
    /// the port file finds the CA to trust.
    public static func serve<Stop: Sendable>(
        _ configuration: Configuration,
        files: ServeFiles,
        until stop: () -> Once<Stop>,
        onListening: (Int) -> Void = { _ in }
    ) async throws -> Statistics {
        var configuration = configuration
        if files.statistics != nil || files.shown != nil, configuration.display == nil {
            configuration.display = DeviceDisplay.Limits()
        }
        if files.statistics != nil { configuration.recordsStreamsInFlight = true }
        configuration.tokenKeys += try files.tokenKeys.map { source in
            Configuration.TokenKey(
                keyID: source.keyID,
                teamID: source.teamID,
                publicKeyPEM: try TokenKeyFile.readPublicKeyPEM(
                    path: source.publicKeyFile,
                    namedBy: files.tokenKeysNamedBy
                ),
                environment: source.environment,
                topics: source.topics
            )
        }
        if let caFile = files.certificateAuthority, !files.replaceCertificateAuthority,
            FileManager.default.fileExists(atPath: caFile)
        {
            throw CredentialError(
                .fileExists,
                path: caFile,
                "The file exists; the gateway's new server CA was not written over it.",
                hint: "Choose another path for the CA, or allow the file to be replaced."
            )
        }
        let gateway = try LocalGateway(configuration: configuration)
        let stopped = stop()
        if let caFile = files.certificateAuthority, let pem = gateway.serverCertificateAuthorityPEM {
            try pem.write(toFile: caFile, atomically: true, encoding: .utf8)
        }
        let port = try await gateway.start()
        do {
            if let portFile = files.port {
                try PrivateFile.write(Array(String(port).utf8), to: portFile, overwrite: true)
            }
        } catch {
            // Nobody can be told the port: the gateway is not left listening.
            try? await gateway.stop()
            throw error
        }
        onListening(port)
        _ = await stopped.value
        try await gateway.stop()
        try gateway.writeReports(files)
        return gateway.statistics
    }
}
