import NIOCore
import NIOHTTP2
import NIOTLS
import PushTransport
import Testing

/// Handlers pick their own user event out of the many an HTTP/2 connection fires by comparing
/// types first: the one they wait for comes through, no other does.
@Suite struct UserEventTests {
    @Test func onlyAnEventOfTheTypeAskedForIsReturned() {
        let closed: Any = StreamClosedEvent(streamID: HTTP2StreamID(5), reason: .cancel)
        let idle: Any = IdleStateHandler.IdleStateEvent.read
        let tls: Any = TLSUserEvent.handshakeCompleted(negotiatedProtocol: "h2")
        #expect(userEvent(closed, as: StreamClosedEvent.self)?.streamID == HTTP2StreamID(5))
        #expect(userEvent(closed, as: StreamClosedEvent.self)?.reason == .cancel)
        #expect(userEvent(idle, as: IdleStateHandler.IdleStateEvent.self) == .read)
        #expect(userEvent(tls, as: TLSUserEvent.self) == .handshakeCompleted(negotiatedProtocol: "h2"))
        #expect(userEvent(closed, as: IdleStateHandler.IdleStateEvent.self) == nil)
        #expect(userEvent(idle, as: StreamClosedEvent.self) == nil)
        #expect(userEvent(tls, as: NIOHTTP2WindowUpdatedEvent.self) == nil)
        #expect(userEvent(42 as Any, as: Int.self) == 42)
        #expect(userEvent(42 as Any, as: Int64.self) == nil)
    }
}
