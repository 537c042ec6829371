import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2

/// Two embedded channels joined in memory, as swift-nio-http2's own tests join them: real HTTP/2
/// framing and state on both sides, no socket, time only when a test advances it.
public enum EmbeddedHTTP2 {
    /// Moves bytes both ways until neither side has anything more to send. What one side wrote
    /// arrives at the other as one read, as a socket would deliver it, so frames sent together
    /// are served in one batch of reads.
    public static func interact(_ first: EmbeddedChannel, _ second: EmbeddedChannel) throws {
        var moved: Bool
        repeat {
            moved = false
            for (from, to) in [(first, second), (second, first)] {
                var gathered = from.allocator.buffer(capacity: 0)
                while let data = try from.readOutbound(as: IOData.self) {
                    if case .byteBuffer(var buffer) = data { gathered.writeBuffer(&buffer) }
                }
                guard gathered.readableBytes > 0, to.isActive else { continue }
                moved = true
                try to.writeInbound(gathered)
            }
        } while moved
    }

    public static func activate(_ channel: EmbeddedChannel) throws {
        try channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
    }

    /// Every frame that reached the end of `channel`'s pipeline so far.
    public static func frames(_ channel: EmbeddedChannel) throws -> [HTTP2Frame] {
        var frames: [HTTP2Frame] = []
        while let frame = try channel.readInbound(as: HTTP2Frame.self) { frames.append(frame) }
        return frames
    }

    public static let request = HPACKHeaders([
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/00fc13adff78"),
        (":authority", "localhost"),
    ])

    public static func status(_ code: Int) -> HPACKHeaders { HPACKHeaders([(":status", String(code))]) }
}

extension HTTP2Frame {
    /// The stream IDs of the HEADERS among `frames`.
    public static func headerStreams(_ frames: [HTTP2Frame]) -> [Int] {
        frames.compactMap { frame in
            if case .headers = frame.payload { return Int(frame.streamID) }
            return nil
        }
    }
}
