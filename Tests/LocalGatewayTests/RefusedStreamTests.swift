import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import TestSupport
import Testing

@testable import LocalGateway

/// Streams the gateway does not process reach the client as RST_STREAM REFUSED_STREAM
/// (RFC 9113 section 8.7: safe to send again), read from the bytes on the wire as a client
/// receives them, before any HTTP/2 library interprets them. CANCEL would tell the client
/// nothing about whether the request was processed.
@Suite(.timeLimit(.minutes(2))) struct RefusedStreamTests {
    static let refusedStream: UInt32 = 0x7
    static let cancel: UInt32 = 0x8

    /// Streams opened before the gateway's SETTINGS can be read exceed its advertised limit of 1.
    @Test func streamsAboveTheAdvertisedLimitAreResetWithRefusedStream() async throws {
        let (gateway, port, _) = try await GatewayBehaviourTests().start {
            $0.faults.maxConcurrentStreams = 1
            $0.faults.latency = 0.2
        }
        defer { Task { try? await gateway.stop() } }
        let wire = WireFrameRecorder()
        let group = MultiThreadedEventLoopGroup.singleton
        let outcomes = (0..<4).map { _ in group.any().makePromise(of: StreamOutcome.self) }
        let (channel, _) = try await GatewayBehaviourTests.connectHTTP2(
            port: port,
            gateway: gateway,
            handlers: [wire]
        ) { channel, multiplexer in
            try channel.pipeline.syncOperations.addHandler(
                OnActive {
                    for outcome in outcomes {
                        multiplexer.createStreamChannel(promise: nil) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandler(RecordedRequest(outcome: outcome))
                            }
                        }
                    }
                }
            )
        }
        defer { channel.close(promise: nil) }
        var results: [StreamOutcome] = []
        for outcome in outcomes { results.append(try await outcome.futureResult.get()) }

        let resets = wire.frames.filter { $0.type == .rstStream }
        let refusedByGateway = gateway.statistics.refusedStreams
        #expect(refusedByGateway >= 1, "the test needs streams above the limit: \(results)")
        #expect(!resets.isEmpty, "no RST_STREAM on the wire; frames: \(wire.frames)")
        #expect(resets.allSatisfy { $0.errorCode == Self.refusedStream }, "codes on the wire: \(resets)")
        #expect(!resets.contains { $0.errorCode == Self.cancel })
        #expect(resets.count == refusedByGateway)
        // The client's own view agrees: every stream was answered or refused, and every
        // refusal carries the code.
        let refused = results.filter { $0 == .reset(.refusedStream) }
        let answered = results.filter { if case .answered = $0 { true } else { false } }
        #expect(refused.count == refusedByGateway, "\(results)")
        #expect(answered.count + refused.count == outcomes.count, "\(results)")
    }

    /// Stream 3's request is still arriving when stream 1's answer triggers a GOAWAY naming
    /// stream 1: stream 3 is not processed, and is refused on the wire before the GOAWAY.
    @Test func streamsAboveTheGoAwayLastStreamAreResetWithRefusedStream() async throws {
        let (gateway, port, _) = try await GatewayBehaviourTests().start { $0.faults.goAwayAfterStreams = 1 }
        defer { Task { try? await gateway.stop() } }
        let wire = WireFrameRecorder()
        let group = MultiThreadedEventLoopGroup.singleton
        let first = group.any().makePromise(of: StreamOutcome.self)
        let second = group.any().makePromise(of: StreamOutcome.self)
        let (channel, _) = try await GatewayBehaviourTests.connectHTTP2(
            port: port,
            gateway: gateway,
            handlers: [wire]
        ) { channel, multiplexer in
            try channel.pipeline.syncOperations.addHandler(
                OnActive {
                    let held = RecordedRequest(outcome: first, holdBody: true)
                    multiplexer.createStreamChannel(promise: nil) { stream in
                        stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(held) }
                    }
                    // The second stream's HEADERS go out before the first stream's body.
                    multiplexer.createStreamChannel(promise: nil) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(
                                RecordedRequest(outcome: second, holdBody: true) { held.sendBody() }
                            )
                        }
                    }
                }
            )
        }
        defer { channel.close(promise: nil) }
        let firstOutcome = try await first.futureResult.get()
        let secondOutcome = try await second.futureResult.get()
        // No credential: APNs' 403 MissingProviderToken, an answer like any other.
        #expect(firstOutcome.status == 403, "\(firstOutcome)")

        let frames = wire.frames
        let goAway = try #require(frames.first { $0.type == .goAway }, "no GOAWAY; frames: \(frames)")
        #expect(goAway.lastStreamID == 1)
        let resets = frames.filter { $0.type == .rstStream }
        #expect(resets.map(\.streamID) == [3], "frames: \(frames)")
        #expect(resets.allSatisfy { $0.errorCode == Self.refusedStream }, "codes on the wire: \(resets)")
        // Before the GOAWAY, so that the client learns it from the stream itself.
        let resetIndex = frames.firstIndex { $0.type == .rstStream }
        let goAwayIndex = frames.firstIndex { $0.type == .goAway }
        #expect(resetIndex != nil && goAwayIndex != nil && resetIndex! < goAwayIndex!, "frames: \(frames)")
        #expect(secondOutcome == .reset(.refusedStream), "\(secondOutcome)")
        #expect(gateway.statistics.refusedAfterGoAway == 1)
        // Only stream 1 was processed.
        #expect(gateway.statistics.rejectedTotal + gateway.statistics.accepted == 1)
    }
}

/// How a request stream ended, as the client's HTTP/2 stack reports it.
enum StreamOutcome: Equatable, Sendable {
    case answered(status: Int)
    case reset(HTTP2ErrorCode)
    case closed

    var status: Int? { if case .answered(let status) = self { status } else { nil } }
}

/// One frame as it arrived from the server: the 9-byte frame header, and the error code of
/// RST_STREAM and GOAWAY (with GOAWAY's last-stream-id).
struct WireFrame: Sendable, CustomStringConvertible {
    enum Kind: UInt8, Sendable {
        case data = 0
        case headers = 1
        case priority = 2
        case rstStream = 3
        case settings = 4
        case pushPromise = 5
        case ping = 6
        case goAway = 7
        case windowUpdate = 8
        case continuation = 9
    }
    var rawType: UInt8
    var streamID: UInt32
    var errorCode: UInt32?
    var lastStreamID: UInt32?
    var type: Kind? { Kind(rawValue: rawType) }
    var description: String {
        "\(type.map { "\($0)" } ?? "type \(rawType)")(stream \(streamID)\(errorCode.map { ", code 0x\(String($0, radix: 16))" } ?? "")\(lastStreamID.map { ", last \($0)" } ?? ""))"
    }
}

/// Sits between TLS and HTTP/2 and parses the server's byte stream into frame headers,
/// passing every byte on unchanged. (A server sends no connection preface beyond its SETTINGS
/// frame, so its bytes are frames from the first.)
final class WireFrameRecorder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let recorded = NIOLockedValueBox<[WireFrame]>([])
    private var pending = ByteBuffer()

    var frames: [WireFrame] { recorded.withLockedValue { $0 } }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        while pending.readableBytes >= 9,
            let length = pending.getInteger(at: pending.readerIndex, as: UInt32.self).map({ Int($0 >> 8) }),
            pending.readableBytes >= 9 + length
        {
            _ = pending.readInteger(as: UInt16.self)
            _ = pending.readInteger(as: UInt8.self)
            let type = pending.readInteger(as: UInt8.self)!
            _ = pending.readInteger(as: UInt8.self)  // flags
            let streamID = pending.readInteger(as: UInt32.self)! & 0x7FFF_FFFF
            var payload = pending.readSlice(length: length)!
            var frame = WireFrame(rawType: type, streamID: streamID)
            switch frame.type {
            case .rstStream:
                frame.errorCode = payload.readInteger(as: UInt32.self)
            case .goAway:
                frame.lastStreamID = payload.readInteger(as: UInt32.self).map { $0 & 0x7FFF_FFFF }
                frame.errorCode = payload.readInteger(as: UInt32.self)
            default:
                break
            }
            recorded.withLockedValue { $0.append(frame) }
        }
        pending.discardReadBytes()
        context.fireChannelRead(data)
    }
}

/// Runs `action` once the connection is active (before TLS has finished, so what it writes is
/// committed before any byte of the server's can be read).
final class OnActive: ChannelInboundHandler {
    typealias InboundIn = Any
    let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }
    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        action()
    }
}

/// A POST whose outcome is recorded: the status, or the RST_STREAM code the stream was closed
/// with. With `holdBody`, only the HEADERS go out until `sendBody()`; `afterHeaders` runs once
/// they are written.
final class RecordedRequest: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload
    let outcome: EventLoopPromise<StreamOutcome>
    let holdBody: Bool
    let afterHeaders: () -> Void
    private var context: ChannelHandlerContext?

    init(outcome: EventLoopPromise<StreamOutcome>, holdBody: Bool = false, afterHeaders: @escaping () -> Void = {}) {
        self.outcome = outcome
        self.holdBody = holdBody
        self.afterHeaders = afterHeaders
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let headers = HPACKHeaders([
            (":method", "POST"), (":scheme", "https"), (":path", "/3/device/\(Fixtures.token.hex)"),
            (":authority", "localhost"), ("apns-topic", "com.example.app"),
        ])
        context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        if !holdBody { sendBody() }
        context.fireChannelActive()
        afterHeaders()
    }

    func sendBody() {
        guard let context else { return }
        let payload = context.channel.allocator.buffer(string: #"{"aps":{"alert":"hi"}}"#)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(payload), endStream: true))), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .headers(let headers) = unwrapInboundIn(data),
            let status = headers.headers.first(name: ":status").flatMap({ Int($0) })
        {
            outcome.succeed(.answered(status: status))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let closed = error as? NIOHTTP2Errors.StreamClosed { outcome.succeed(.reset(closed.errorCode)) }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        outcome.succeed(.closed)  // ignored when the outcome is already known
        context.fireChannelInactive()
    }
}
