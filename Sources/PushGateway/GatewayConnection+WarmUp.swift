import Foundation
import NIOCore
import NIOPosix
import NIOSSL

extension GatewayConnection {
    /// Makes ready, on a thread of its own, what every connection needs and that depends on no
    /// option: the shared event loops (their threads started) and the TLS library (its first
    /// context made). A command that will connect after other work (reading its options, a
    /// credential) calls this first, so that the connection does not pay for them on its own
    /// path (docs/performance.md, "The cold probe"). Calling it more than once does nothing more.
    public static func warmUp() {
        guard warming.complete(()) else { return }
        Thread.detachNewThread {
            _ = MultiThreadedEventLoopGroup.singleton.next()
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.minimumTLSVersion = .tlsv12
            tls.applicationProtocols = ["h2"]
            tls.trustRoots = .certificates([])
            _ = try? NIOSSLContext(configuration: tls)
        }
    }

    private static let warming = Once<Void>()
}
