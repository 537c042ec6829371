import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import PushCore
import TestSupport
import Testing

@testable import LocalGateway

/// The gateway's frame-level streams, set up exactly as a connection's are once TLS is done,
/// against a swift-nio-http2 client joined in memory: limits as APNs changes them, refused
/// streams, GOAWAY's last stream, the answer before the body, the receive window given back.
@Suite struct GatewayStreamsTests {
    struct Pair {
        let client: EmbeddedChannel
        let server: EmbeddedChannel

        func interact() throws { try EmbeddedHTTP2.interact(client, server) }

        /// A notification's request on `streamID`, with a provider token when `signed`.
        func request(_ streamID: Int, signed: Bool, endStream: Bool = true, body: [UInt8]? = nil) throws {
            var notification = try Fixtures.alert()
            if let body { notification.payload = body }
            let bearer = signed ? try Fixtures.providerKey().makeJWT() : nil
            let headers = RequestEncoder(template: notification.template, authority: "localhost")
                .headers(for: notification, bearer: bearer)
                .map { ($0.name, $0.value) }
            client.write(
                HTTP2Frame(
                    streamID: HTTP2StreamID(streamID),
                    payload: .headers(.init(headers: HPACKHeaders(headers), endStream: false))
                ),
                promise: nil
            )
            if endStream {
                let body = ByteBuffer(bytes: notification.payload)
                client.write(
                    HTTP2Frame(
                        streamID: HTTP2StreamID(streamID),
                        payload: .data(.init(data: .byteBuffer(body), endStream: true))
                    ),
                    promise: nil
                )
            }
            client.flush()
        }

        /// What the client received, in order, as short words.
        func received() throws -> [String] {
            try EmbeddedHTTP2.frames(client).compactMap(Self.describe)
        }

        static func describe(_ frame: HTTP2Frame) -> String? {
            let id = Int(frame.streamID)
            switch frame.payload {
            case .headers(let head): return "\(id) :status \(head.headers.first(name: ":status") ?? "none")"
            case .rstStream(let code): return "\(id) RST_STREAM \(GatewayStreamsTests.name(code))"
            case .goAway(let last, let code, _): return "GOAWAY last \(Int(last)) \(GatewayStreamsTests.name(code))"
            case .settings(.settings(let settings)):
                let limit = settings.first { $0.parameter == .maxConcurrentStreams }
                return limit.map { "SETTINGS max streams \($0.value)" }
            case .windowUpdate(let increment): return "\(id) WINDOW_UPDATE \(increment)"
            default: return nil
            }
        }
    }

    static func name(_ code: HTTP2ErrorCode) -> String {
        switch code {
        case .noError: "NO_ERROR"
        case .refusedStream: "REFUSED_STREAM"
        default: "\(code)"
        }
    }

    func makePair(_ change: (inout LocalGateway.Configuration) -> Void = { _ in }) throws -> Pair {
        var configuration = LocalGateway.Configuration()
        configuration.tokenKeys = [Fixtures.tokenKey]
        change(&configuration)
        let gateway = try LocalGateway(configuration: configuration)
        let server = EmbeddedChannel()
        try EmbeddedHTTP2.activate(server)
        try gateway.startHTTP2(server, number: 1)
        let client = EmbeddedChannel(handler: NIOHTTP2Handler(mode: .client))
        try EmbeddedHTTP2.activate(client)
        return Pair(client: client, server: server)
    }

    /// A connection without a certificate starts at one stream; the first notification with a
    /// valid token raises the limit, and the SETTINGS saying so arrive before its answer.
    @Test func theLimitRisesOnceATokenIsShown() throws {
        let pair = try makePair()
        try pair.interact()
        #expect(try pair.received() == ["SETTINGS max streams 1"])
        try pair.request(1, signed: true)
        try pair.interact()
        #expect(try pair.received() == ["SETTINGS max streams 1000", "1 :status 200"])
    }

    /// A rejection lowers the limit to one stream until a notification is accepted.
    @Test func aRejectionLowersTheLimitAndAnAcceptanceRestoresIt() throws {
        let pair = try makePair { $0.tokenKeys = [] }
        try pair.interact()
        #expect(try pair.received() == ["SETTINGS max streams 1000"])
        try pair.request(1, signed: false)
        try pair.interact()
        let rejected = try pair.received()
        #expect(rejected.first == "SETTINGS max streams 1")
        #expect(rejected.dropFirst().first?.hasPrefix("1 :status 4") == true)
    }

    /// Streams above the advertised limit, sent before the client could read it, are refused
    /// with REFUSED_STREAM (safe to send again); the one within it is answered.
    @Test func streamsAboveTheLimitAreRefused() throws {
        let pair = try makePair()
        try pair.request(1, signed: true)
        try pair.request(3, signed: true)
        try pair.interact()
        let received = try pair.received()
        #expect(received.contains("3 RST_STREAM REFUSED_STREAM"))
        #expect(received.contains("1 :status 200"))
        #expect(!received.contains { $0.hasPrefix("3 :status") })
    }

    /// GOAWAY names the highest stream processed; a stream above it that arrived in the same
    /// batch is refused before the GOAWAY leaves, and the connection closes half a second later.
    @Test func goAwayNamesTheLastStreamProcessed() throws {
        let pair = try makePair {
            $0.tokenKeys = []
            $0.faults.goAwayAfterStreams = 1
        }
        try pair.interact()
        _ = try pair.received()
        try pair.request(1, signed: false)
        try pair.request(3, signed: false)
        try pair.interact()
        let received = try pair.received()
        let refused = try #require(received.firstIndex(of: "3 RST_STREAM REFUSED_STREAM"))
        let goAway = try #require(received.firstIndex(of: "GOAWAY last 1 NO_ERROR"))
        #expect(refused < goAway)
        #expect(received.contains { $0.hasPrefix("1 :status") })
        pair.server.embeddedEventLoop.advanceTime(by: .milliseconds(499))
        #expect(pair.server.isActive)
        pair.server.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!pair.server.isActive)
    }

    /// Request bodies use the connection's receive window (HTTP/2's 65,535 bytes): the gateway
    /// gives back what was used once half of it is, in one WINDOW_UPDATE on stream 0; no
    /// notification fills half of a stream's own window, so none is given back per stream.
    @Test func theReceiveWindowIsGivenBackOnceHalfUsed() throws {
        let pair = try makePair()
        try pair.interact()
        _ = try pair.received()
        let text = #"{"aps":{"alert":""# + String(repeating: "x", count: 3_950) + #""}}"#
        let body = Array(text.utf8)
        let half = 65_535 / 2
        var used = 0
        var updates: [String] = []
        for streamID in stride(from: 1, through: 17, by: 2) {
            try pair.request(streamID, signed: true, body: body)
            try pair.interact()
            used += body.count
            let received = try pair.received()
            #expect(received.contains("\(streamID) :status 200"), "\(received)")
            updates += received.filter { $0.contains("WINDOW_UPDATE") }
            if used <= half { #expect(updates.isEmpty, "after \(used) bytes") }
        }
        #expect(used > half)
        #expect(updates == ["0 WINDOW_UPDATE \(used)"])
    }

    /// Answering before the body, as nginx does: the answer, then RST_STREAM NO_ERROR.
    @Test func anEarlyAnswerIsFollowedByAReset() throws {
        let pair = try makePair { $0.faults.answerEarlyAndReset = true }
        try pair.interact()
        _ = try pair.received()
        try pair.request(1, signed: true, endStream: false)
        try pair.interact()
        let received = try pair.received()
        let answer = try #require(received.firstIndex(of: "1 :status 200"))
        let reset = try #require(received.firstIndex(of: "1 RST_STREAM NO_ERROR"))
        #expect(answer < reset)
    }

    /// A rejection answered early keeps its reason: the DATA frame that holds it goes out
    /// before the RST_STREAM, which would otherwise overtake it (the reset is not flow
    /// controlled) and drop it from swift-nio-http2's buffer.
    @Test func anEarlyRejectionSendsItsReasonBeforeTheReset() throws {
        let pair = try makePair { $0.faults.answerEarlyAndReset = true }
        try pair.interact()
        _ = try pair.received()
        try pair.request(1, signed: false, endStream: false)  // no provider token: 403
        try pair.interact()
        var order: [String] = []
        for frame in try EmbeddedHTTP2.frames(pair.client) where Int(frame.streamID) == 1 {
            switch frame.payload {
            case .headers(let head): order.append(":status \(head.headers.first(name: ":status") ?? "none")")
            case .data(let data):
                guard case .byteBuffer(let buffer) = data.data else { continue }
                order.append("DATA " + String(decoding: buffer.readableBytesView, as: UTF8.self))
            case .rstStream(let code): order.append("RST_STREAM \(Self.name(code))")
            default: break
            }
        }
        #expect(order.count == 3, "\(order)")
        #expect(order.first == ":status 403", "\(order)")
        #expect(order.dropFirst().first?.contains("MissingProviderToken") == true, "the reason arrives: \(order)")
        #expect(order.last == "RST_STREAM NO_ERROR", "and only then the reset: \(order)")
    }
}
