import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Requests on a connection: each a stream of its own, answered whole.
extension GatewayConnection {
    /// Sends one notification on a new stream of this connection and waits for the answer.
    ///
    /// A rejection is not an error: it comes back as a ``PushResponse`` with its status and
    /// reason. Throws ``GatewayError`` only when no answer came (closed connection, GOAWAY,
    /// timeout); ``GatewayError/isRetryable`` says whether the server did not process it.
    public func send(_ notification: PushNotification) async throws -> PushResponse {
        do {
            try notification.validate()
        } catch let error as PushCoreError {
            throw GatewayError(.invalidNotification, error.message, hint: error.hint)
        }
        let encoder = RequestEncoder(template: notification.template, authority: authority)
        try await prepareToken()
        let presented = try bearer()
        let response = try await send(encoder.headers(for: notification, bearer: presented), body: notification.payload)
        // A token from elsewhere (a fleet's shared one) that APNs calls invalid is dropped and
        // a new one fetched, once: the source replaces a token that is not what it claims.
        guard response.status == 403, response.reason == .invalidProviderToken, let presented, let tokens,
            await tokens.dropRejected(presented)
        else { return response }
        try await prepareToken()
        return try await send(encoder.headers(for: notification, bearer: try bearer()), body: notification.payload)
    }

    /// Sends a request exactly as given, plus `authorization` for token authentication. For
    /// tests that must send what ``PushNotification`` refuses to build (a wrong method, a
    /// duplicate header, an oversized payload).
    func send(headers given: [(String, String)], body: [UInt8]) async throws -> PushResponse {
        var headers = given.map { RequestEncoder.Header($0.0, $0.1) }
        try await prepareToken()
        if let bearer = try bearer() {
            headers.append(RequestEncoder.Header(APNsHeader.authorization, "bearer " + bearer))
        }
        return try await send(headers, body: body)
    }

    /// Fetches the provider token of a key held elsewhere when the cached one is missing or old.
    func prepareToken() async throws {
        if let tokens { try await Self.prepare(tokens) }
    }

    /// Fetches a remote key's token into `tokens` when it needs one; the source's failure as a
    /// connection's, naming the key (for a bulk run's start too).
    package static func prepare(_ tokens: ProviderTokenCache) async throws {
        guard tokens.needsPreparing else { return }
        do {
            try await tokens.prepare()
        } catch let error as any ReportableError {
            throw GatewayError(
                .invalidCredential,
                "The provider token of key \(tokens.keyID) cannot be had from its store: \(error.message)",
                hint: error.hint
            )
        }
    }

    /// The provider token for the next request (nil with certificate authentication).
    func bearer() throws -> String? {
        guard let tokens else { return nil }
        do {
            return try tokens.token()
        } catch {
            throw GatewayError(
                .invalidCredential,
                "The provider token cannot be signed.",
                hint: "Check the .p8 key file is an EC P-256 key."
            )
        }
    }

    private func send(_ headers: [RequestEncoder.Header], body: [UInt8]) async throws -> PushResponse {
        let answer = try await exchange(headers, body: body)
        return PushResponse(status: answer.status, headers: answer.headers, body: answer.body, latency: answer.latency)
    }

    /// Writes one request on a new stream and waits for the whole answer, undecoded.
    func exchange(_ headers: [RequestEncoder.Header], body: [UInt8]) async throws -> WireAnswer {
        let (multiplexer, goAway, closed) = state.withLockedValue { ($0.multiplexer, $0.goAway, $0.isClosed) }
        if let goAway { throw GatewayError.goAway(goAway, processed: false) }
        guard let multiplexer, !closed else {
            if closed, let detail = state.withLockedValue({ $0.closeDetail }) {
                throw GatewayError.connectionClosed(detail)
            }
            throw GatewayError.notConnected()
        }
        let request = StreamRequest(
            headers: HPACKHeaders(encoded: headers),
            body: body.isEmpty ? nil : ByteBuffer(bytes: body),
            timeout: Self.amount(configuration.timeouts.request),
            timeoutSeconds: configuration.timeouts.request
        )
        let result = OncePromise<WireAnswer>()
        open(request, on: multiplexer) { outcome, _ in result.complete(outcome.mapError { $0 }) }
        return try await result.get()
    }

    /// Opens a stream for `request`; `completion` runs exactly once, on the connection's event loop.
    func open(
        _ request: StreamRequest,
        on multiplexer: NIOHTTP2Handler.StreamMultiplexer,
        completion: @escaping StreamCompletion
    ) {
        let connection = self
        let once = Once<StreamOutcome>()
        once.whenComplete { completion($0.result, $0.written) }
        multiplexer.createStreamChannel { streamChannel in
            streamChannel.eventLoop.makeCompletedFuture {
                try streamChannel.pipeline.syncOperations.addHandler(
                    StreamHandler(request: request, connection: connection) {
                        once.complete(StreamOutcome(result: $0, written: $1))
                    }
                )
            }
        }.whenFailure { error in
            once.complete(
                StreamOutcome(
                    result: .failure(
                        GatewayError.connectionClosed("before the stream could open (\(UserFacing.describe(error)))")
                    ),
                    written: false
                )
            )
        }
    }
}

extension HPACKHeaders {
    /// The request encoder's headers, with its indexing advice.
    package init(encoded headers: [RequestEncoder.Header]) {
        self.init()
        reserveCapacity(headers.count)
        for header in headers {
            add(name: header.name, value: header.value, indexing: header.indexable ? .indexable : .nonIndexable)
        }
    }
}
