import Foundation
import NIOConcurrencyHelpers
import NIOCore
import PushCore

/// The delivery log's one writer: lines handed over on an event loop are written to the file on
/// a serial queue of their own, never on the loop, in the order they were handed over.
///
/// Each line's future succeeds once the line is in the file (false when it could not be
/// written), so a connection answers 200 only after its line is there: a test that got 200 can
/// read it. Lines waiting to be written are bounded (``maxPendingBytes``): past it a line is
/// refused, as a full disk refuses it, rather than memory growing without end. ``close()``
/// writes every line handed over before it, then syncs and closes the file.
final class DeliveryLog: Sendable {
    /// The most bytes of lines waiting to be written at once.
    static let maxPendingBytes = 8 << 20

    private struct Waiting {
        var lines: [(bytes: [UInt8], promise: EventLoopPromise<Bool>)] = []
        var bytes = 0
        /// A drain is queued or running: a new line joins it.
        var draining = false
        var closed = false
    }

    private let handle: FileHandle
    private let queue = DispatchQueue(label: "apnsctl.local-gateway.delivery-log")
    private let waiting = NIOLockedValueBox(Waiting())

    init(handle: FileHandle) {
        self.handle = handle
    }

    /// Hands `line` to the writer; the future, on `loop`, says whether it reached the file.
    func append(_ line: [UInt8], on loop: any EventLoop) -> EventLoopFuture<Bool> {
        let promise = loop.makePromise(of: Bool.self)
        let startDrain = waiting.withLockedValue { waiting -> Bool? in
            guard !waiting.closed, waiting.bytes + line.count <= Self.maxPendingBytes else { return nil }
            waiting.lines.append((line, promise))
            waiting.bytes += line.count
            defer { waiting.draining = true }
            return !waiting.draining
        }
        switch startDrain {
        case nil: promise.succeed(false)
        case true?: queue.async { self.drain() }
        case false?: break
        }
        return promise.futureResult
    }

    /// Writes every line handed over before it, then syncs and closes the file.
    func close() async {
        waiting.withLockedValue { $0.closed = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.drain()
                try? self.handle.synchronize()
                try? self.handle.close()
                continuation.resume()
            }
        }
    }

    /// On the queue: writes what waits, in batches, until nothing does.
    private func drain() {
        while true {
            let batch = waiting.withLockedValue { waiting -> [(bytes: [UInt8], promise: EventLoopPromise<Bool>)] in
                let batch = waiting.lines
                waiting.lines = []
                waiting.bytes = 0
                if batch.isEmpty { waiting.draining = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(batch.reduce(0) { $0 + $1.bytes.count })
            for line in batch { bytes += line.bytes }
            let written = write(bytes)
            for line in batch { line.promise.succeed(written) }
        }
    }

    /// The one place the log's file is written: never on an event loop.
    private func write(_ bytes: [UInt8]) -> Bool {
        BlockingWork.check("Writing the delivery log")
        do {
            try handle.write(contentsOf: bytes)
            return true
        } catch {
            return false
        }
    }
}
