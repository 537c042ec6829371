import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import PushTransport
import Testing

/// The handler between TLS and HTTP/2 that turns the frames written before a flush into one
/// write (one TLS record), holds flushes during a batch, and reports the end of each read batch.
@Suite struct BatchingHandlerTests {
    func writes(_ channel: EmbeddedChannel) throws -> [String] {
        var writes: [String] = []
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = data else {
                writes.append("file region")
                continue
            }
            writes.append(String(buffer: buffer))
        }
        return writes
    }

    @Test func writesBeforeAFlushLeaveAsOne() throws {
        let channel = EmbeddedChannel(handler: BatchingHandler())
        let first = channel.write(ByteBuffer(string: "HEADERS"))
        let second = channel.write(ByteBuffer(string: "DATA"))
        #expect(try writes(channel).isEmpty)
        channel.flush()
        #expect(try writes(channel) == ["HEADERSDATA"])
        // Each write's promise hears of the one write that carried it.
        try first.wait()
        try second.wait()
    }

    @Test func aBatchHoldsFlushesUntilItEnds() throws {
        let handler = BatchingHandler()
        let channel = EmbeddedChannel(handler: handler)
        handler.beginBatch()
        for part in ["a", "b", "c"] { channel.writeAndFlush(ByteBuffer(string: part), promise: nil) }
        #expect(try writes(channel).isEmpty)
        handler.endBatch()
        #expect(try writes(channel) == ["abc"])
        // Outside a batch a flush goes through at once.
        channel.writeAndFlush(ByteBuffer(string: "d"), promise: nil)
        #expect(try writes(channel) == ["d"])
    }

    @Test func aBatchWithoutFlushesSendsNothingAtItsEnd() throws {
        let handler = BatchingHandler()
        let channel = EmbeddedChannel(handler: handler)
        handler.beginBatch()
        channel.write(ByteBuffer(string: "held"), promise: nil)
        handler.endBatch()
        #expect(try writes(channel).isEmpty)
        channel.flush()
        #expect(try writes(channel) == ["held"])
    }

    @Test func closingReleasesWhatWasGathered() throws {
        let handler = BatchingHandler()
        let channel = EmbeddedChannel(handler: handler)
        handler.beginBatch()
        let written = channel.write(ByteBuffer(string: "GOAWAY"))
        try channel.close().wait()
        #expect(try writes(channel) == ["GOAWAY"])
        try written.wait()
    }

    @Test func theEndOfEachReadBatchIsReported() throws {
        let count = NIOLockedValueBox(0)
        let channel = EmbeddedChannel(handler: BatchingHandler { count.withLockedValue { $0 += 1 } })
        // writeInbound ends its read batch; the second batch is a read-complete on its own.
        try channel.writeInbound(ByteBuffer(string: "frame"))
        channel.pipeline.fireChannelReadComplete()
        #expect(count.withLockedValue { $0 } == 2)
        #expect(try channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == "frame")
    }
}
