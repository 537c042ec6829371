import Foundation
import NIOPosix
import PushGateway
import PushStore
import Testing

/// Work that can block stops a debug build when it runs on an event loop or in a task off the
/// libraries' own pool; the store's lock (`flock` tried without blocking) is taken by any caller.
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

    #if DEBUG
    @Test func blockingWorkInATaskOffThePoolStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            BlockingWork.check("Waiting for a lock")
        }
    }
    #endif

    @Test func blockingWorkOnThePoolPassesTheCheck() async throws {
        _ = BlockingWork.nioDetectorInstalled
        #expect(BlockingWork.inSwiftTask)
        let onPool = try await BlockingPool.run {
            BlockingWork.check("Waiting for a lock")
            return BlockingWork.isOnPool
        }
        #expect(onPool)
    }

    /// The store's lock never blocks a thread: a task takes it directly.
    @Test func theStoreLockIsTakenByATask() async throws {
        _ = BlockingWork.nioDetectorInstalled
        let root = URL(fileURLWithPath: NSTemporaryDirectory() + "blocking-work-store-\(getpid())")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(!BlockingWork.onEventLoop)
        let ran = try await StoreLock.withLock(root: root) { true }
        #expect(ran)
    }

    /// The detector answers for the loop's own thread, so the check above is the loop's.
    @Test func anEventLoopsThreadIsSeenAsOne() throws {
        _ = BlockingWork.nioDetectorInstalled
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        #expect(try group.next().submit { BlockingWork.onEventLoop }.wait())
    }
}
