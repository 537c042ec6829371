import CredentialFormats

/// How the client authenticated, as far as the connection's limit cares.
enum ClientIdentity {
    /// A certificate verified in the TLS handshake.
    case certificate(PushCertificate)
    /// No certificate, and token keys are configured: one stream until a request has carried a
    /// valid provider token.
    case awaitingToken
    /// No certificate: each request's provider token authenticates it.
    case tokens

    init(certificate: PushCertificate?, demandsToken: Bool) {
        if let certificate {
            self = .certificate(certificate)
        } else {
            self = demandsToken ? .awaitingToken : .tokens
        }
    }

    var certificate: PushCertificate? {
        if case .certificate(let certificate) = self { return certificate }
        return nil
    }

    var isAwaitingToken: Bool {
        if case .awaitingToken = self { return true }
        return false
    }

    mutating func tokenAccepted() {
        if case .awaitingToken = self { self = .tokens }
    }
}

/// SETTINGS_MAX_CONCURRENT_STREAMS as advertised and as acknowledged.
struct StreamLimits: Equatable {
    /// The limit to return to: the configured one, or the one the change fault set.
    private(set) var configured: Int
    /// The last advertised (sent, perhaps not yet acknowledged).
    private(set) var advertised: Int
    /// The one the client has acknowledged: in force (swift-nio-http2 enforces it).
    private(set) var acknowledged: Int
    /// Sent and not yet acknowledged, oldest first (SETTINGS are acknowledged in order).
    private var pending: [Int]

    /// The first SETTINGS' limit is also taken as acknowledged until the client's
    /// acknowledgement arrives (which it sends before its first request).
    init(start: Int, configured: Int) {
        self.configured = configured
        advertised = start
        acknowledged = start
        pending = [start]
    }

    mutating func configure(_ limit: Int) { configured = limit }

    /// True when `limit` is new and a SETTINGS must say so.
    mutating func advertise(_ limit: Int) -> Bool {
        guard limit != advertised else { return false }
        advertised = limit
        pending.append(limit)
        return true
    }

    mutating func acknowledge() {
        guard !pending.isEmpty else { return }
        acknowledged = pending.removeFirst()
    }
}
