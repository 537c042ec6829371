import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

@testable import LocalGateway

/// The guard that drops a connection the gateway gave up on, on an embedded loop whose time
/// only the test advances.
@Suite struct ConnectionGuardTests {
    struct Guarded {
        let channel: EmbeddedChannel
        let guardian: ConnectionGuard
        let givenUp: NIOLockedValueBox<Int>
    }

    func makeGuarded() throws -> Guarded {
        let givenUp = NIOLockedValueBox(0)
        let guardian = ConnectionGuard { givenUp.withLockedValue { $0 += 1 } }
        let channel = EmbeddedChannel(handler: guardian)
        try channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        return Guarded(channel: channel, guardian: guardian, givenUp: givenUp)
    }

    static let calmDown = HTTP2Frame(
        streamID: .rootStream,
        payload: .goAway(lastStreamID: 7, errorCode: .enhanceYourCalm, opaqueData: nil)
    )

    @Test func aGoAwayWithAnErrorClosesOnceWritten() throws {
        let guarded = try makeGuarded()
        guarded.guardian.wroteFrame(Self.calmDown)
        #expect(guarded.givenUp.withLockedValue { $0 } == 1)
        // Nothing more the client sends goes inward.
        try guarded.channel.writeInbound(ByteBuffer(string: "more frames"))
        #expect(try guarded.channel.readInbound(as: ByteBuffer.self) == nil)
        #expect(guarded.channel.isActive)
        try guarded.channel.writeAndFlush(ByteBuffer(string: "GOAWAY bytes")).wait()
        #expect(!guarded.channel.isActive)
        #expect(guarded.givenUp.withLockedValue { $0 } == 1)
    }

    @Test func aGoAwayThatCannotBeWrittenClosesAfterASecond() throws {
        let guarded = try makeGuarded()
        guarded.guardian.wroteFrame(Self.calmDown)
        guarded.channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(guarded.channel.isActive)
        guarded.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!guarded.channel.isActive)
    }

    @Test func aGoAwayWithoutAnErrorChangesNothing() throws {
        let guarded = try makeGuarded()
        guarded.guardian.wroteFrame(
            HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 7, errorCode: .noError, opaqueData: nil))
        )
        try guarded.channel.writeInbound(ByteBuffer(string: "request"))
        #expect(try guarded.channel.readInbound(as: ByteBuffer.self) != nil)
        try guarded.channel.writeAndFlush(ByteBuffer(string: "answer")).wait()
        guarded.channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(guarded.channel.isActive)
        #expect(guarded.givenUp.withLockedValue { $0 } == 0)
    }

    /// A client that reads nothing: closed after 30 s unless its answers start to drain.
    @Test func unreadAnswersCloseAfterThirtySeconds() throws {
        let guarded = try makeGuarded()
        let loop = guarded.channel.embeddedEventLoop
        guarded.channel.isWritable = false
        guarded.channel.pipeline.fireChannelWritabilityChanged()
        loop.advanceTime(by: .seconds(29))
        #expect(guarded.channel.isActive)
        loop.advanceTime(by: .seconds(1))
        #expect(!guarded.channel.isActive)
        #expect(guarded.givenUp.withLockedValue { $0 } == 1)
    }

    @Test func answersThatDrainCancelTheClose() throws {
        let guarded = try makeGuarded()
        let loop = guarded.channel.embeddedEventLoop
        guarded.channel.isWritable = false
        guarded.channel.pipeline.fireChannelWritabilityChanged()
        loop.advanceTime(by: .seconds(20))
        guarded.channel.isWritable = true
        guarded.channel.pipeline.fireChannelWritabilityChanged()
        loop.advanceTime(by: .seconds(60))
        #expect(guarded.channel.isActive)
        #expect(guarded.givenUp.withLockedValue { $0 } == 0)
    }
}

/// The flood budgets' windows, on a clock the test sets.
@Suite struct FloodBudgetTests {
    @Test func aBudgetIsPerWindow() {
        var budget = FloodBudget(limit: 3, window: .seconds(10))
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        // Three within the window, a fourth over it; a new window starts once the old one has
        // passed, and the count with it.
        let seconds: [Int64] = [0, 0, 0, 5, 11, 12, 13, 14]
        let over = seconds.map { budget.spend(at: start + .seconds($0)) }
        #expect(over == [false, false, false, true, false, false, false, true])
    }
}
