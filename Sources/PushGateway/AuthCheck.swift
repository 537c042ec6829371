import CredentialFormats
import Foundation

/// One notification to a made-up device token, read as a verdict on the credential and topic.
///
/// APNs answers 400 BadDeviceToken only after it has accepted the credential and topic, and 403
/// (or 400 with a topic reason) when it has not; no device is notified either way.
public struct AuthCheck: Encodable, Sendable {
    public enum Verdict: String, Codable, Sendable {
        case accepted, rejected, inconclusive
    }

    public var verdict: Verdict
    public var status: Int?
    public var reason: String?
    public var explanation: String
    public var fix: String?
    public var latency: Double?
    /// When the notification could not be sent: why (its hint is ``fix``).
    public var error: GatewayError?

    public init(
        verdict: Verdict,
        status: Int? = nil,
        reason: String? = nil,
        explanation: String,
        fix: String? = nil,
        latency: Double? = nil,
        error: GatewayError? = nil
    ) {
        self.verdict = verdict
        self.status = status
        self.reason = reason
        self.explanation = explanation
        self.fix = fix
        self.latency = latency
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case verdict, status, reason, explanation, fix, latency
    }

    /// Sends the check notification on an open connection and judges the answer.
    public static func run(on connection: GatewayConnection, topic: String?) async -> AuthCheck {
        do {
            let response = try await connection.send(try probeNotification(topic: topic))
            return interpret(response)
        } catch let error as GatewayError {
            return AuthCheck(
                verdict: .inconclusive,
                explanation: "The check notification could not be sent: \(error.message)",
                fix: error.hint,
                error: error
            )
        } catch {
            return AuthCheck(
                verdict: .inconclusive,
                explanation:
                    "The check notification could not be sent: \((error as? GatewayError)?.message ?? UserFacing.describe(error))"
            )
        }
    }

    /// A background notification to a random token that expires at once: nothing to deliver,
    /// nothing stored if a device ever had that token.
    public static func probeNotification(topic: String?) throws -> PushNotification {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        return PushNotification(
            deviceToken: try DeviceToken(bytes: bytes),
            topic: topic,
            pushType: .background,
            priority: .powerConsiderate,
            expiration: Date(timeIntervalSince1970: 0),
            payload: try Payload.background()
        )
    }

    /// The verdict an answer to the check notification gives.
    public static func interpret(_ response: PushResponse) -> AuthCheck {
        let reason = response.reason
        let topicReasons: [APNsReason] = [.topicDisallowed, .badTopic, .missingTopic]
        switch response.status {
        case 200:
            return AuthCheck(
                verdict: .accepted,
                status: 200,
                explanation:
                    "The gateway accepted the credential and topic (and the made-up token: a test gateway without a device registry does).",
                latency: response.latency
            )
        case 400 where reason.map { !topicReasons.contains($0) } ?? true:
            return AuthCheck(
                verdict: .accepted,
                status: 400,
                reason: reason?.rawValue,
                explanation:
                    "APNs answered \(reason?.rawValue ?? "400") for the made-up token, which it does only after accepting the credential and topic.",
                latency: response.latency
            )
        case 403, 400:
            return AuthCheck(
                verdict: .rejected,
                status: response.status,
                reason: reason?.rawValue,
                explanation: reason?.explanation ?? "APNs rejected the request with status \(response.status).",
                fix: reason?.fix,
                latency: response.latency
            )
        default:
            return AuthCheck(
                verdict: .inconclusive,
                status: response.status,
                reason: reason?.rawValue,
                explanation:
                    "APNs answered \(response.status) \(reason?.rawValue ?? ""): no verdict on the credential; try again later.",
                fix: reason?.fix,
                latency: response.latency
            )
        }
    }
}

/// A handshake with a gateway and, optionally, an auth check on the same connection.
public struct HandshakeCheck: Sendable {
    public enum Verdict: Sendable, Equatable {
        /// Connected (no auth check was asked for).
        case connected
        /// Connected, and the gateway accepted the credential and topic.
        case accepted
        /// Connected, and the gateway rejected the credential or topic.
        case rejected
        /// Connected, but the auth check gave no verdict.
        case inconclusive
        /// Could not connect (see ``error``).
        case failed
    }

    public var handshake: HandshakeReport
    public var authCheck: AuthCheck?
    /// Why the connection failed.
    public var error: GatewayError?

    public init(handshake: HandshakeReport, authCheck: AuthCheck? = nil, error: GatewayError? = nil) {
        self.handshake = handshake
        self.authCheck = authCheck
        self.error = error
    }

    public var verdict: Verdict {
        // A server that refuses the client certificate has judged the credential.
        if error?.code == .clientCertificateRejected { return .rejected }
        if error != nil { return .failed }
        switch authCheck?.verdict {
        case nil: return .connected
        case .accepted: return .accepted
        case .rejected: return .rejected
        case .inconclusive: return .inconclusive
        }
    }

    /// Connects, runs the auth check with `topic` when asked, and closes.
    public static func run(configuration: GatewayConfiguration, topic: String?, authCheck: Bool) async -> HandshakeCheck
    {
        let connection = GatewayConnection(configuration: configuration)
        do {
            return try await connection.closing { connection in
                let report = try await connection.connect()
                let check = authCheck ? await AuthCheck.run(on: connection, topic: topic) : nil
                return HandshakeCheck(handshake: report, authCheck: check)
            }
        } catch {
            let gatewayError = error as? GatewayError ?? GatewayError(.connectionClosed, "\(error)", hint: nil)
            return HandshakeCheck(handshake: connection.handshakeReport, error: gatewayError)
        }
    }
}
