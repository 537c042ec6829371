import Foundation
import NIOPosix
import PushGateway
import PushStore
import Testing

/// Work that can block (here the store's lock, taken with `flock`) stops a debug build when it
/// runs on an event loop, and runs as ever on a thread of its own.
struct BlockingWorkTests {
    #if DEBUG
    @Test func theStoreLockTakenOnAnEventLoopStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            _ = BlockingWork.nioDetectorInstalled
            let path = NSTemporaryDirectory() + "blocking-work-\(getpid()).lock"
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            try? group.next().submit {
                if case .success(let lock) = StoreLock.acquire(at: path) { lock.release() }
            }.wait()
        }
    }
    #endif

    @Test func theStoreLockTakenOnAPlainThreadIsTaken() throws {
        _ = BlockingWork.nioDetectorInstalled
        let path = NSTemporaryDirectory() + "blocking-work-plain-\(getpid()).lock"
        defer { unlink(path) }
        #expect(!BlockingWork.onEventLoop)
        guard case .success(let lock) = StoreLock.acquire(at: path) else {
            Issue.record("the lock at \(path) was not taken")
            return
        }
        lock.release()
    }

    /// The detector answers for the loop's own thread, so the check above is the loop's.
    @Test func anEventLoopsThreadIsSeenAsOne() throws {
        _ = BlockingWork.nioDetectorInstalled
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        #expect(try group.next().submit { BlockingWork.onEventLoop }.wait())
    }
}
