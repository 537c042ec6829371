import CredentialFormats
import Foundation

extension LocalGateway {
    /// Everything the gateway does, fixed at start.
    public struct Configuration: Sendable {
        /// The TLS server identity.
        public enum ServerIdentity: Sendable {
            /// A fresh CA and a certificate for `names`, made at start; the CA is
            /// ``LocalGateway/serverCertificateAuthorityPEM`` (write it for `--ca`).
            case generate(names: [String] = ["localhost", "127.0.0.1", "::1"])
            /// PEM files: the certificate (chain) and its private key.
            case files(certificate: String, privateKey: String)
            /// An identity minted in code.
            case minted(MintedIdentity)
        }

        /// A provider-token key the gateway accepts.
        public struct TokenKey: Sendable {
            public var keyID: String
            public var teamID: String
            /// The P-256 public key, SubjectPublicKeyInfo PEM (`AuthKey_X.pub.pem`).
            public var publicKeyPEM: String
            /// Apple's environment-scoped keys: the one environment the key serves (nil: both).
            /// Used against the other one it gets 403 BadEnvironmentKeyInToken.
            public var environment: PushEnvironment?
            /// Apple's topic-specific keys: the bundle IDs the key may push to (their `.voip`,
            /// `.complication`... topics included). Empty: every app of the team. Any other
            /// topic gets 403 UnrelatedKeyIdInToken.
            public var topics: [String]
            public init(
                keyID: String,
                teamID: String,
                publicKeyPEM: String,
                environment: PushEnvironment? = nil,
                topics: [String] = []
            ) {
                self.keyID = keyID
                self.teamID = teamID
                self.publicKeyPEM = publicKeyPEM
                self.environment = environment
                self.topics = topics
            }
        }

        /// How APNs' connections behave, each on unless turned off.
        public struct Dynamics: Sendable {
            /// After a rejected notification (any 4xx answer) advertise
            /// SETTINGS_MAX_CONCURRENT_STREAMS 1 until a notification is accepted.
            public var singleStreamAfterRejection = true
            /// On a connection without a client certificate, when token keys are configured:
            /// advertise 1 stream until a request has carried a valid provider token.
            public var singleStreamUntilToken = true
            /// GOAWAY carries APNs' JSON reason (`{"reason":"Shutdown"}`, `IdleTimeout`) as its
            /// debug data; off, the debug data is empty.
            public var goAwayReasons = true
            /// Honour the environment and topic restrictions of ``TokenKey`` and
            /// ``Configuration/otherEnvironmentKeyIDs``; off, every key serves everything.
            public var keyScopes = true
            public init() {}
        }

        /// Ways to misbehave on purpose, for testing clients.
        public struct Faults: Sendable {
            /// Seconds added before each answer.
            public var latency: Double = 0
            /// Fractions (0...1) of otherwise accepted notifications answered with
            /// 429 TooManyRequests, 500 InternalServerError and 503 ServiceUnavailable.
            public var tooManyRequestsRate: Double = 0
            public var internalServerErrorRate: Double = 0
            public var serviceUnavailableRate: Double = 0
            /// Seed of the generator that picks those answers, so runs repeat.
            public var seed: UInt64 = 1
            /// Send GOAWAY (NO_ERROR, `{"reason": goAwayReason}`) after answering this many
            /// streams on a connection, then close it.
            public var goAwayAfterStreams: Int?
            public var goAwayReason = "Shutdown"
            /// Close the TCP connection, without GOAWAY, when a connection's stream number
            /// `closeAfterStreams + 1` arrives (it is never answered).
            public var closeAfterStreams: Int?
            /// Once, when the gateway accepts its notification number N: record it as delivered,
            /// then cut the connection without answering it (an answer lost in flight).
            public var dropAfterAccepted: Int?
            /// SETTINGS_MAX_CONCURRENT_STREAMS advertised at the start of each connection.
            public var maxConcurrentStreams: Int = 1000
            /// Raise (or lower) the limit on a connection once it has accepted this many
            /// notifications: APNs starts token connections at 1 and raises it after a valid token.
            public var changeMaxConcurrentStreams: (afterAccepted: Int, to: Int)?
            /// Answer as soon as the request headers arrive and then reset the stream with
            /// RST_STREAM NO_ERROR, as nginx does (the payload is then not read or checked).
            public var answerEarlyAndReset = false
            public init() {}
        }

        public var environment: PushEnvironment = .sandbox
        public var host = "127.0.0.1"
        /// 0 picks a free port; ``LocalGateway/start()`` returns the port bound.
        public var port = 0
        public var identity: ServerIdentity = .generate()
        /// PEM files of the CAs whose certificates clients may authenticate with. Empty:
        /// certificate authentication is off.
        public var clientCAFiles: [String] = []
        /// The same, as PEM text (for CAs minted in code).
        public var clientCAPEMs: [String] = []
        /// Token keys accepted. Empty and no client CA: every request gets 403 MissingProviderToken.
        public var tokenKeys: [TokenKey] = []
        /// Key IDs the gateway knows only as keys restricted to the other environment, without
        /// holding their public keys: a token naming one gets 403 BadEnvironmentKeyIdInToken,
        /// refused on its key ID alone.
        public var otherEnvironmentKeyIDs: Set<String> = []
        public var dynamics = Dynamics()
        /// A JSON device registry: `{"<hex token>": {"topic": "...", "environment": "sandbox",
        /// "unregistered_at": <ms>}}`. Nil: any well-formed token is accepted.
        public var deviceRegistryFile: String?
        /// The same, given in code (used when ``deviceRegistryFile`` is nil).
        public var deviceRegistry: [String: DeviceRegistration]?
        /// Every accepted notification is appended here as one JSON line.
        public var logFile: String?
        /// Follow what each device would show (``LocalGateway/deviceDisplay``), within these
        /// bounds; nil: not followed.
        public var display: DeviceDisplay.Limits?
        /// Record the streams open at once over time (``LocalGateway/streamsInFlight``).
        public var recordsStreamsInFlight = false
        public var faults = Faults()
        /// A connection that has not finished its TLS handshake after this many seconds is closed.
        public var handshakeTimeout: Double = 30
        /// A connection that has sent no request this many seconds after its TLS handshake
        /// (PINGs and SETTINGS do not count) gets GOAWAY `{"reason":"IdleTimeout"}` and is
        /// closed; nil waits for ever.
        public var firstRequestTimeout: Double? = 60
        /// A connection that sends nothing for this many seconds gets GOAWAY with APNs' reason
        /// `{"reason":"IdleTimeout"}` and is closed; nil keeps idle connections open.
        public var idleTimeout: Double? = 300
        /// The most connections held at once. A connection arriving at the cap takes the place
        /// of the one idle the longest (no answer awaited; idle since it was accepted or since its
        /// last answer), which gets GOAWAY `IdleTimeout` and is closed; when every connection
        /// awaits an answer, the new one is closed at once.
        /// Lowered at start when the process may not open that many descriptors (the soft limit
        /// is raised first, up to the hard one): ``LocalGateway/connectionCap``.
        public var maxConnections = Configuration.defaultMaxConnections
        public static let defaultMaxConnections = 1_000
        /// The clock used to judge provider tokens' age.
        public var clock: GatewayClock = .system

        public init(environment: PushEnvironment = .sandbox) {
            self.environment = environment
        }
    }

    /// One device in the registry.
    public struct DeviceRegistration: Codable, Sendable, Equatable {
        public var topic: String
        public var environment: PushEnvironment
        /// Milliseconds since 1970 at which the token stopped being valid: answers 410 Unregistered.
        public var unregisteredAt: Int64?

        public init(topic: String, environment: PushEnvironment, unregisteredAt: Int64? = nil) {
            self.topic = topic
            self.environment = environment
            self.unregisteredAt = unregisteredAt
        }

        enum CodingKeys: String, CodingKey {
            case topic, environment
            case unregisteredAt = "unregistered_at"
        }
    }

    /// Reads a registry file; keys are normalised to lower-case hex.
    public static func loadRegistry(path: String) throws -> [String: DeviceRegistration] {
        let bytes = try CredentialFile.readBytes(path: path, kind: .deviceList)
        let raw: [String: DeviceRegistration]
        do {
            raw = try JSONDecoder().decode([String: DeviceRegistration].self, from: Data(bytes))
        } catch {
            throw LocalGatewayError(
                .invalidRegistry,
                path: path,
                "The device registry is not valid JSON of the expected shape (\(UserFacing.describe(error))).",
                hint: #"Write {"<hex token>": {"topic": "com.example.app", "environment": "sandbox"}}."#
            )
        }
        var registry: [String: DeviceRegistration] = [:]
        for (token, registration) in raw {
            do {
                registry[try DeviceToken(token).hex] = registration
            } catch let error as PushCoreError {
                // Said of the registry file, so that the user knows where the bad token is.
                throw LocalGatewayError(
                    .invalidRegistry,
                    path: path,
                    "The device registry lists \"\(token)\", which is not a device token: \(error.message)",
                    hint: error.hint
                )
            }
        }
        return registry
    }
}
