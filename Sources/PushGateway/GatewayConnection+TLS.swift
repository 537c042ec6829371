import CredentialFormats
import Dispatch
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import PushTransport
import X509

/// TLS for a connection: the client context, and what a failed handshake means.
extension GatewayConnection {
    /// TLS, then HTTP/2 up to the server's first SETTINGS frame. HTTP/2 is configured from
    /// inside the handshake-completed event, before swift-nio-ssl hands over any bytes that
    /// arrived with the server's Finished, so the server's SETTINGS cannot be lost.
    func handshake(
        channel: any Channel,
        sslContext: NIOSSLContext,
        evaluator: ServerTrustEvaluator,
        address: SocketAddress,
        onTLSDone: () -> Void
    ) async throws {
        let host = configuration.endpoint.host
        let isIP = ServerTrustEvaluator.isIPAddress(host)
        let tlsResult = OncePromise<String?>()
        let settingsResult = OncePromise<Void>()
        let connection = self
        let limits = configuration.http2Limits
        let tlsStart = DispatchTime.now()
        let tlsTimeout = configuration.timeouts.tls
        let http2Timeout = configuration.timeouts.http2
        let addressText = address.displayString

        try await channel.eventLoop.submit {
            let tls = try NIOSSLClientHandler(
                context: sslContext,
                serverHostname: isIP ? nil : host,
                customVerificationCallback: { certificates, promise in
                    evaluator.verify(certificates, promise: promise)
                }
            )
            let observer = TLSObserver(result: tlsResult) { context, alpn in
                guard alpn == nil || alpn == "h2" else { throw GatewayError.alpnRejected(alpn ?? "") }
                if let hook = connection.readComplete {
                    // Between TLS and HTTP/2: it sees the end of reads first and every flush.
                    let batching = BatchingHandler(readComplete: hook)
                    try context.pipeline.syncOperations.addHandler(batching)
                    connection.update { $0.batching = batching }
                }
                if let keepAlive = connection.configuration.keepAlive {
                    // Under HTTP/2, where every byte read counts as the server being there.
                    try context.pipeline.syncOperations.addHandler(
                        IdleStateHandler(readTimeout: Self.amount(keepAlive.interval))
                    )
                }
                var multiplexer: NIOHTTP2Handler.StreamMultiplexer?
                if let frameStreams = connection.frameStreams {
                    var bulk = Self.connectionConfiguration(limits)
                    // The header blocks sent are the request encoder's, one template for the
                    // whole run; of an answer only :status, apns-id, apns-unique-id and the body
                    // are read, each checked where it is read. swift-nio-http2's check of every
                    // header name and value, both ways, was a tenth of a bulk run's CPU.
                    bulk.headerBlockValidation = .disabled
                    try context.pipeline.syncOperations.addHandler(
                        NIOHTTP2Handler(
                            mode: .client,
                            connectionConfiguration: bulk,
                            streamConfiguration: Self.streamConfiguration(limits)
                        )
                    )
                    try context.pipeline.syncOperations.addHandler(frameStreams)
                } else {
                    multiplexer = try context.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client,
                        connectionConfiguration: Self.connectionConfiguration(limits),
                        streamConfiguration: Self.streamConfiguration(limits),
                        inboundStreamInitializer: { stream in stream.close() }
                    )  // APNs never pushes
                }
                if let keepAlive = connection.configuration.keepAlive {
                    try context.pipeline.syncOperations.addHandler(
                        KeepAliveHandler(connection: connection, timeout: Self.amount(keepAlive.timeout))
                    )
                }
                try context.pipeline.syncOperations.addHandler(
                    ConnectionObserver(connection: connection, settings: settingsResult)
                )
                connection.update {
                    $0.multiplexer = multiplexer
                    $0.http2Ready = true
                }
            }
            try channel.pipeline.syncOperations.addHandlers([tls, observer])
            channel.eventLoop.scheduleTask(in: Self.amount(tlsTimeout)) {
                if tlsResult.complete(.failure(GatewayError.tlsTimeout(addressText, seconds: tlsTimeout))) {
                    channel.close(promise: nil)
                }
            }
        }.get()

        let alpn: String?
        do {
            alpn = try await tlsResult.get()
        } catch {
            let outcome = evaluator.outcome
            update {
                $0.report.tlsHandshakeDuration = Self.seconds(since: tlsStart)
                $0.report.serverCertificates = outcome.presented
                $0.report.trust = outcome.verdict
                $0.report.trustDetail = outcome.detail
                $0.report.anchor = outcome.anchor
            }
            throw tlsError(error, outcome: outcome, address: addressText)
        }
        let tlsDone = DispatchTime.now()
        let version = try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).tlsVersion
        }.get()
        let outcome = evaluator.outcome
        update {
            $0.report.tlsHandshakeDuration = Self.seconds(since: tlsStart, until: tlsDone)
            $0.report.alpn = alpn
            $0.report.tlsVersion = version.flatMap { $0 }.map(Self.name)
            $0.report.serverCertificates = outcome.presented
            $0.report.trust = outcome.verdict
            $0.report.trustDetail = outcome.detail
            $0.report.anchor = outcome.anchor
        }
        onTLSDone()

        channel.eventLoop.scheduleTask(in: Self.amount(http2Timeout)) {
            if settingsResult.complete(.failure(GatewayError.http2Timeout(addressText, seconds: http2Timeout))) {
                channel.close(promise: nil)
            }
        }
        do {
            try await settingsResult.get()
        } catch {
            if let failure = state.withLockedValue({ $0.tlsFailure }), let alert = TLSAlert(errorText: failure) {
                throw alert.error(credential: configuration.credential, address: addressText)
            }
            throw error
        }
        update { $0.report.http2ReadyDuration = Self.seconds(since: tlsDone) }
    }

    func tlsError(_ error: any Error, outcome: ServerTrustEvaluator.Outcome, address: String) -> GatewayError {
        if let gatewayError = error as? GatewayError { return gatewayError }
        if let alert = TLSAlert(errorText: String(describing: error)) {
            return alert.error(credential: configuration.credential, address: address)
        }
        let host = configuration.endpoint.host
        switch outcome.verdict {
        case .untrusted:
            return GatewayError(
                .tlsUntrusted,
                "The server's certificate chain is not trusted: \(outcome.detail ?? "no trusted root").",
                hint:
                    "APNs moved to the \"USERTrust RSA Certification Authority\" root in 2025 (sandbox in January, production on 24 February); this machine's trust store may lack it: update the ca-certificates package, or trust that root explicitly. For a local gateway, trust the CA certificate it wrote.",
                server: address
            )
        case .hostnameMismatch:
            return GatewayError(
                .tlsHostnameMismatch,
                "The server's certificate is not valid for \(host): \(outcome.detail ?? "the names differ").",
                hint:
                    "Connect with a name the certificate lists (for a local gateway: localhost or 127.0.0.1), or check that DNS or a proxy is not sending you elsewhere.",
                server: address
            )
        case .expired:
            return GatewayError(
                .tlsCertificateExpired,
                "The server's certificate is not valid now: \(outcome.detail ?? "expired").",
                hint: "Check this machine's clock; if it is right, the server's certificate must be renewed.",
                server: address
            )
        case .trusted, .notChecked:
            break
        }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return GatewayError(
                .tlsHostnameMismatch,
                "The server's certificate is not valid for \(host).",
                hint: "Connect with a name the certificate lists.",
                server: address
            )
        }
        if let closed = error as? TLSObserver.ClosedDuringHandshake {
            return GatewayError(
                .tlsServerClosed,
                "The server at \(address) closed the connection during the TLS handshake\(closed.detail.map { " (\($0))" } ?? "").",
                hint:
                    "A server that requires a client certificate closes like this when it rejects ours; also check the port speaks TLS.",
                isRetryable: true,
                server: address
            )
        }
        if let ssl = error as? NIOSSLError {
            switch ssl {
            case .uncleanShutdown:
                return GatewayError(
                    .tlsServerClosed,
                    "The server at \(address) closed the connection during the TLS handshake.",
                    hint: "A server that requires a client certificate closes like this when it rejects ours.",
                    isRetryable: true,
                    server: address
                )
            case .handshakeFailed(let inner):
                return GatewayError(
                    .tlsHandshakeFailed,
                    "The TLS handshake with \(address) failed: \(UserFacing.describe(inner)).",
                    hint: Self.handshakeHint(String(describing: inner)),
                    server: address
                )
            default:
                break
            }
        }
        return GatewayError(
            .tlsHandshakeFailed,
            "The TLS handshake with \(address) failed: \(UserFacing.describe(error)).",
            hint: Self.handshakeHint(String(describing: error)),
            server: address
        )
    }

    static func handshakeHint(_ text: String) -> String {
        let lower = text.lowercased()
        if lower.contains("certificate_required") || lower.contains("bad_certificate") || lower.contains("unknown_ca")
            || lower.contains("certificate_unknown") || lower.contains("handshake_failure")
        {
            return
                "The server rejected the client certificate: check it is a push certificate for this gateway's environment and that it has not expired or been revoked."
        }
        if lower.contains("protocol_version") || lower.contains("wrong_version") {
            return "The server does not speak TLS 1.2 or newer, or this port is not a TLS port."
        }
        return "The handshake report shows how far the connection got and what the server sent."
    }

    // MARK: Configuration helpers

    func makeTLS() throws -> (NIOSSLContext, ServerTrustEvaluator, HandshakeReport.TrustSource) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        tls.certificateVerification = .fullVerification
        // The server's chain is judged by ServerTrustEvaluator (the custom verification callback),
        // never by BoringSSL's own store. Left at its default, that store is loaded from the
        // system's CA bundle when the context is made, and a machine without one (no
        // ca-certificates, as in a minimal container) would fail even with --ca.
        tls.trustRoots = .certificates([])
        if case .certificate(let der, let chain, let key) = configuration.credential {
            do {
                tls.certificateChain = try ([der] + chain).map {
                    .certificate(try NIOSSLCertificate(bytes: $0, format: .der))
                }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: key.bytes, format: .der))
            } catch {
                // The key's bytes never go into the message.
                throw GatewayError(
                    .invalidCredential,
                    "The client certificate or its private key cannot be loaded for TLS.",
                    hint: "Check the credential file: the key must belong to the certificate.",
                    remedy: .credentialExamined(file: nil)
                )
            }
        }
        let custom = try ServerTrustEvaluator.loadCertificates(paths: configuration.caFiles)
        let bundle = try configuration.caBundle.map(TrustStore.loadBundle)
        let source: HandshakeReport.TrustSource =
            bundle != nil
            ? (custom.isEmpty ? .bundle : .bundleAndCustom)
            : configuration.trustSystemRoots ? (custom.isEmpty ? .system : .systemAndCustom) : .custom
        if bundle == nil && configuration.trustSystemRoots && custom.isEmpty {
            // Only the system's roots can judge this server: swift-certificates starts reading
            // them in the background when first named, so name them now, while DNS, TCP and TLS
            // take their time.
            _ = CertificateStore.systemTrustRoots
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw GatewayError(
                .invalidCredential,
                "The TLS settings cannot be used: the private key may not match the certificate.",
                hint: "Check the credential file: its key must belong to its certificate.",
                remedy: .credentialExamined(file: nil)
            )
        }
        return (
            context,
            ServerTrustEvaluator(
                host: configuration.endpoint.host,
                customRoots: custom,
                trustSystemRoots: configuration.trustSystemRoots,
                bundleRoots: bundle,
                clock: configuration.clock
            ),
            source
        )
    }

    static func connectionConfiguration(
        _ limits: GatewayConfiguration.HTTP2Limits
    ) -> NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
        ]
        configuration.maximumConnectionGlitches = limits.maximumGlitches
        if !limits.useNIODefaultWindows {
            configuration.controlFrameRateLimit.maximumCount = limits.controlFrames
            configuration.controlFrameRateLimit.windowLength = Self.amount(limits.controlFrameWindow)
        }
        configuration.maximumRecentlyResetStreams = limits.recentlyResetStreams
        return configuration
    }

    static func streamConfiguration(_ limits: GatewayConfiguration.HTTP2Limits) -> NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        if !limits.useNIODefaultWindows {
            configuration.streamResetFrameRateLimit.maximumCount = limits.resetFrames
            configuration.streamResetFrameRateLimit.windowLength = Self.amount(limits.resetFrameWindow)
            configuration.streamErrorRateLimit.maximumCount = limits.streamErrorsPerSecond
            configuration.streamErrorRateLimit.windowLength = .seconds(1)
        }
        return configuration
    }

    /// `:authority`: the host, with the port when it is not 443.
    var authority: String {
        RequestEncoder.authority(host: configuration.endpoint.host, port: configuration.endpoint.port)
    }
}
