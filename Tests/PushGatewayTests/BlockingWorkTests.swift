import Foundation
import NIOPosix
import PushGateway
import PushStore
import Testing

/// Work that can block stops a debug build when it runs on an event loop; the store's lock
/// (`flock`) waits on the libraries' own pool, so a caller on any thread, a task included, takes it.
struct BlockingWorkTests {
    #if DEBUG
    @Test func blockingWorkOnAnEventLoopStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            _ = BlockingWork.nioDetectorInstalled
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            try? group.next().submit { BlockingWork.check("Waiting for a lock") }.wait()
        }
    }
    #endif

    @Test func theStoreLockIsTakenOnThePoolWhoeverAsks() async throws {
        _ = BlockingWork.nioDetectorInstalled
        let path = NSTemporaryDirectory() + "blocking-work-plain-\(getpid()).lock"
        defer { unlink(path) }
        #expect(!BlockingWork.onEventLoop)
        guard case .success(let lock) = await StoreLock.acquire(at: path) else {
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
