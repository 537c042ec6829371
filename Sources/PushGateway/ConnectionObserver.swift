import Dispatch
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import NIOTLS

/// Sees the connection-level frames (stream 0: SETTINGS, GOAWAY, PING) that swift-nio-http2
/// passes up the parent pipeline, and the connection's end.
final class ConnectionObserver: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let connection: GatewayConnection
    private let settings: OncePromise<Void>

    init(connection: GatewayConnection, settings: OncePromise<Void>) {
        self.connection = connection
        self.settings = settings
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .settings(.settings(let list)):
            connection.update { state in
                for setting in list {
                    state.report.serverSettings[Self.name(setting.parameter)] = UInt32(setting.value)
                    if setting.parameter == .maxConcurrentStreams {
                        state.maxConcurrentStreams = UInt32(setting.value)
                    }
                }
                if !settings.isCompleted {
                    state.report.maxConcurrentStreams = state.maxConcurrentStreams
                }
            }
            if list.contains(where: { $0.parameter == .maxConcurrentStreams }) {
                connection.events?(.settings(maxConcurrentStreams: connection.maxConcurrentStreams))
            }
            settings.complete(.success(()))
        case .goAway(let lastStreamID, let errorCode, let opaqueData):
            let info = GatewayError.GoAwayInfo(
                lastStreamID: Int(lastStreamID),
                errorCode: Self.name(errorCode),
                reason: Self.reason(opaqueData)
            )
            connection.update { $0.goAway = info }
            connection.events?(.goAway(lastStreamID: Int(lastStreamID)))
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOSSLError || error is BoringSSLError {
            // With TLS 1.3 a server refuses a client certificate after the handshake, with an alert.
            connection.update { state in
                if state.tlsFailure == nil { state.tlsFailure = String(describing: error) }
            }
            return
        }
        // Stream-level errors also pass here; the streams handle those themselves.
        guard Self.isConnectionFatal(error) else { return }
        connection.update { state in
            if state.connectionError == nil { state.connectionError = String(describing: error) }
            state.closeDetail =
                state.closeDetail
                ?? "after the server sent more than this client tolerates (\(UserFacing.sanitize(String(describing: type(of: error)))))"
        }
        // swift-nio-http2 has already sent GOAWAY for these but leaves closing to us; a
        // connection we have told to go away must not carry more notifications.
        context.close(promise: nil)
    }

    /// swift-nio-http2's denial-of-service verdicts: the connection is over.
    static func isConnectionFatal(_ error: any Error) -> Bool {
        error is NIOHTTP2Errors.ExcessiveRSTFrames || error is NIOHTTP2Errors.ExcessiveStreamErrors
            || error is NIOHTTP2Errors.ExcessiveNumberOfGlitches || error is NIOHTTP2Errors.ExcessiveControlFrames
            || error is NIOHTTP2Errors.ExcessiveEmptyDataFrames || error is NIOHTTP2Errors.ExcessiveContinuationFrames
            || error is NIOHTTP2Errors.ExcessiveOutboundFrameBuffering
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.update { state in
            state.isClosed = true
            if state.closeDetail == nil {
                state.closeDetail =
                    state.goAway.map { "after the server's GOAWAY\($0.reason.map { " (\($0))" } ?? "")" }
                    ?? "by the server"
            }
        }
        settings.complete(.failure(GatewayError.connectionClosed("before the server's HTTP/2 SETTINGS arrived")))
        context.fireChannelInactive()
        // After the streams' own ends, which swift-nio-http2 delivers as the connection goes.
        let events = connection.events
        context.eventLoop.assumeIsolated().execute { events?(.closed) }
    }

    /// APNs puts `{"reason":"Shutdown"}` in GOAWAY's debug data.
    static func reason(_ data: ByteBuffer?) -> String? {
        guard var data, let bytes = data.readBytes(length: data.readableBytes), !bytes.isEmpty else { return nil }
        struct Body: Decodable { var reason: String? }
        if let body = try? JSONDecoder().decode(Body.self, from: Data(bytes)), let reason = body.reason {
            return reason
        }
        return String(decoding: bytes.prefix(200), as: UTF8.self)
    }

    static func name(_ parameter: HTTP2SettingsParameter) -> String {
        switch parameter {
        case .headerTableSize: "SETTINGS_HEADER_TABLE_SIZE"
        case .enablePush: "SETTINGS_ENABLE_PUSH"
        case .maxConcurrentStreams: "SETTINGS_MAX_CONCURRENT_STREAMS"
        case .initialWindowSize: "SETTINGS_INITIAL_WINDOW_SIZE"
        case .maxFrameSize: "SETTINGS_MAX_FRAME_SIZE"
        case .maxHeaderListSize: "SETTINGS_MAX_HEADER_LIST_SIZE"
        case .enableConnectProtocol: "SETTINGS_ENABLE_CONNECT_PROTOCOL"
        default: "SETTINGS_\(parameter)"
        }
    }

    static func name(_ code: HTTP2ErrorCode) -> String {
        switch code {
        case .noError: "NO_ERROR"
        case .protocolError: "PROTOCOL_ERROR"
        case .internalError: "INTERNAL_ERROR"
        case .flowControlError: "FLOW_CONTROL_ERROR"
        case .settingsTimeout: "SETTINGS_TIMEOUT"
        case .streamClosed: "STREAM_CLOSED"
        case .frameSizeError: "FRAME_SIZE_ERROR"
        case .refusedStream: "REFUSED_STREAM"
        case .cancel: "CANCEL"
        case .compressionError: "COMPRESSION_ERROR"
        case .connectError: "CONNECT_ERROR"
        case .enhanceYourCalm: "ENHANCE_YOUR_CALM"
        case .inadequateSecurity: "INADEQUATE_SECURITY"
        case .http11Required: "HTTP_1_1_REQUIRED"
        default: "0x\(String(code.networkCode, radix: 16))"
        }
    }
}

extension HTTP2ErrorCode {
    /// The code's name as HTTP/2 spells it (`REFUSED_STREAM`), for results and messages.
    package var http2Name: String { ConnectionObserver.name(self) }
}
