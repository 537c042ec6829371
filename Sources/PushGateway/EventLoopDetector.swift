import NIOPosix
import PushCore

extension BlockingWork {
    /// Installs NIO's answer to "is this thread an event loop's?" for ``BlockingWork/check(_:file:line:)``;
    /// every module that starts event loops evaluates it once.
    public static let nioDetectorInstalled: Void = installEventLoopDetector {
        MultiThreadedEventLoopGroup.currentEventLoop != nil
    }
}
