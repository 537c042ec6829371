import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import TestSupport
import Testing

@testable import PushBulk

/// The bulk sender's frame-level streams against a real swift-nio-http2 server handler, joined
/// in memory: what each way a stream can end is reported as.
@Suite struct FrameStreamsTests {
    final class Ended {
        var outcomes: [BulkEngine.SendID: String] = [:]
    }

    struct Pair {
        let client: EmbeddedChannel
        let server: EmbeddedChannel
        let streams: FrameStreams
        let ended: Ended

        func interact() throws { try EmbeddedHTTP2.interact(client, server) }

        /// Opens `sendID`'s stream (the sender flushes at the end of its batch).
        func open(_ sendID: Int) -> Int? {
            streams.open(sendID, headers: EmbeddedHTTP2.request, body: ByteBuffer(string: "{}")).map(Int.init)
        }

        func answer(_ streamID: Int, status: Int, body: Int = 0, end: Bool = true) {
            let id = HTTP2StreamID(streamID)
            server.write(
                HTTP2Frame(
                    streamID: id,
                    payload: .headers(.init(headers: EmbeddedHTTP2.status(status), endStream: end && body == 0))
                ),
                promise: nil
            )
            if body > 0 {
                let bytes = ByteBuffer(repeating: UInt8(ascii: "x"), count: body)
                server.write(
                    HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(bytes), endStream: end))),
                    promise: nil
                )
            }
            server.flush()
        }

        func send(_ frame: HTTP2Frame) { server.writeAndFlush(frame, promise: nil) }

        /// The server's SETTINGS with a new limit of concurrent streams.
        func sendLimit(_ maxConcurrentStreams: Int) {
            let setting = HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)
            send(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([setting]))))
        }

        /// HEADERS the server has received, by stream ID.
        func requests() throws -> [Int] { HTTP2Frame.headerStreams(try EmbeddedHTTP2.frames(server)) }
    }

    static func describe(_ outcome: FrameStreams.Outcome) -> String {
        switch outcome {
        case .answered(let response): "answered \(response.status)"
        case .reset(.noError): "reset NO_ERROR"
        case .reset(.refusedStream): "reset REFUSED_STREAM"
        case .reset(.other(let name)): "reset \(name)"
        case .closed: "closed"
        }
    }

    func makePair(serverLimit: Int = 100) throws -> Pair {
        let ended = Ended()
        let streams = FrameStreams { sendID, outcome in ended.outcomes[sendID] = Self.describe(outcome) }
        let client = EmbeddedChannel()
        try client.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .client))
        try client.pipeline.syncOperations.addHandler(streams)
        var settings = NIOHTTP2Handler.ConnectionConfiguration()
        settings.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: serverLimit)]
        let server = EmbeddedChannel(handler: NIOHTTP2Handler(mode: .server, connectionConfiguration: settings))
        try EmbeddedHTTP2.activate(client)
        try EmbeddedHTTP2.activate(server)
        let pair = Pair(client: client, server: server, streams: streams, ended: ended)
        try pair.interact()
        _ = try EmbeddedHTTP2.frames(server)
        _ = try EmbeddedHTTP2.frames(client)
        return pair
    }

    @Test func anAnswerEndsItsStream() throws {
        let pair = try makePair()
        #expect(pair.open(7) == 1)
        #expect(pair.open(8) == 3)
        try pair.interact()
        #expect(try pair.requests() == [1, 3])
        pair.answer(3, status: 400, body: 30)
        try pair.interact()
        #expect(pair.ended.outcomes == [8: "answered 400"])
    }

    @Test func aRefusedStreamIsReportedAsRefused() throws {
        let pair = try makePair()
        _ = pair.open(1)
        try pair.interact()
        pair.send(HTTP2Frame(streamID: 1, payload: .rstStream(.refusedStream)))
        try pair.interact()
        #expect(pair.ended.outcomes == [1: "reset REFUSED_STREAM"])
    }

    /// nginx answers before reading the body, then resets with NO_ERROR: the answer counts.
    @Test func aResetAfterTheAnswerKeepsTheAnswer() throws {
        let pair = try makePair()
        _ = pair.open(1)
        _ = pair.open(2)
        try pair.interact()
        pair.answer(1, status: 200, end: false)
        pair.send(HTTP2Frame(streamID: 1, payload: .rstStream(.noError)))
        // No answer at all before the reset: a plain NO_ERROR reset.
        pair.send(HTTP2Frame(streamID: 3, payload: .rstStream(.noError)))
        try pair.interact()
        #expect(pair.ended.outcomes == [1: "answered 200", 2: "reset NO_ERROR"])
    }

    /// The streams above a GOAWAY's last stream end unanswered (reported on the next tick, when
    /// the GOAWAY is known); the one below it still gets its answer.
    @Test func goAwaysLastStreamSplitsTheStreams() throws {
        let pair = try makePair()
        for sendID in 1...3 { _ = pair.open(sendID) }
        try pair.interact()
        pair.send(
            HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil))
        )
        try pair.interact()
        pair.client.embeddedEventLoop.run()
        #expect(pair.ended.outcomes[1] == nil)
        #expect(pair.ended.outcomes[2] != nil && pair.ended.outcomes[2]?.hasPrefix("answered") == false)
        #expect(pair.ended.outcomes[3] != nil && pair.ended.outcomes[3]?.hasPrefix("answered") == false)
        pair.answer(1, status: 200)
        try pair.interact()
        #expect(pair.ended.outcomes[1] == "answered 200")
    }

    /// swift-nio-http2 holds streams above the server's limit; a limit raised by SETTINGS lets
    /// them go, a limit lowered holds the next ones back.
    @Test func streamLimitChangesGoverWhatLeaves() throws {
        let pair = try makePair(serverLimit: 1)
        for sendID in 1...3 { _ = pair.open(sendID) }
        try pair.interact()
        #expect(try pair.requests() == [1])
        pair.answer(1, status: 200)
        try pair.interact()
        #expect(try pair.requests() == [3])
        pair.sendLimit(10)
        try pair.interact()
        #expect(try pair.requests() == [5])
        pair.answer(3, status: 200)
        pair.answer(5, status: 200)
        pair.sendLimit(1)
        try pair.interact()
        for sendID in 4...5 { _ = pair.open(sendID) }
        try pair.interact()
        #expect(try pair.requests() == [7])
        #expect(pair.ended.outcomes.count == 3)
    }

    /// Answers' bodies use the connection's receive window: it is given back once half is used.
    @Test func windowIsGivenBackOnceHalfUsed() throws {
        let pair = try makePair()
        for sendID in 1...4 { _ = pair.open(sendID) }
        try pair.interact()
        _ = try EmbeddedHTTP2.frames(pair.server)
        for streamID in [1, 3, 5] { pair.answer(streamID, status: 400, body: 10_000) }
        try pair.interact()
        #expect(try Self.windowUpdates(pair.server).isEmpty)
        pair.answer(7, status: 400, body: 10_000)
        try pair.interact()
        #expect(try Self.windowUpdates(pair.server) == [0: 40_000])
        #expect(pair.ended.outcomes.count == 4)
    }

    static func windowUpdates(_ channel: EmbeddedChannel) throws -> [Int: Int] {
        var updates: [Int: Int] = [:]
        for frame in try EmbeddedHTTP2.frames(channel) {
            if case .windowUpdate(let increment) = frame.payload {
                updates[Int(frame.streamID), default: 0] += increment
            }
        }
        return updates
    }

    @Test func streamsStillOpenEndClosedWithTheConnection() throws {
        let pair = try makePair()
        _ = pair.open(1)
        try pair.interact()
        try pair.client.close().wait()
        pair.client.embeddedEventLoop.run()
        #expect(pair.ended.outcomes == [1: "closed"])
        #expect(pair.open(2) == nil)
    }
}
