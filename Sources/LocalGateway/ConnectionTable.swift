import NIOCore

/// The gateway's open connections, bounded by a cap, and which of them are idle (no answer
/// awaited) in the order they became idle (accepted, or answered their last request), so that a connection arriving at the cap can take the
/// place of the one idle the longest: under a flood of idle connections, a client with
/// notifications to send is still served. Kept under the gateway's lock; every operation is
/// constant time, amortised.
struct ConnectionTable {
    /// What to do with a connection that has just been accepted.
    enum Admission {
        /// Room for it.
        case admitted
        /// At the cap: it takes the place of this connection, idle the longest, which is
        /// already out of the table and is to be closed.
        case shed(any Channel)
        /// At the cap and no connection is idle (every one awaits an answer): closed at once.
        case refused
    }

    private(set) var cap: Int
    private var channels: [Int: any Channel] = [:]
    /// Idle connections, each with the generation of its latest entry in ``idleOrder``.
    private var idleGeneration: [Int: UInt64] = [:]
    /// Connections in the order they became idle, oldest first. An entry whose generation is
    /// no longer the connection's (it became busy, idle again, or left) is skipped and dropped.
    private var idleOrder = CircularBuffer<(number: Int, generation: UInt64)>()
    private var nextGeneration: UInt64 = 0

    init(cap: Int) { self.cap = max(1, cap) }

    var count: Int { channels.count }
    var all: [any Channel] { Array(channels.values) }
    var idleCount: Int { idleGeneration.count }
    /// Entries in the idle order, live and stale.
    var orderLength: Int { idleOrder.count }

    /// A connection just accepted: idle (no request yet) from now.
    mutating func admit(_ number: Int, _ channel: any Channel) -> Admission {
        var admission = Admission.admitted
        if channels.count >= cap {
            guard let oldest = takeOldestIdle() else { return .refused }
            admission = .shed(oldest)
        }
        channels[number] = channel
        becameIdle(number)
        return admission
    }

    /// The connection awaits an answer: it is not shed.
    mutating func becameBusy(_ number: Int) {
        idleGeneration.removeValue(forKey: number)
    }

    /// Nothing awaits an answer now: it can be shed, after those idle longer.
    mutating func becameIdle(_ number: Int) {
        guard channels[number] != nil else { return }
        nextGeneration &+= 1
        idleGeneration[number] = nextGeneration
        idleOrder.append((number, nextGeneration))
        compactIfSparse()
    }

    /// The connection closed (or was shed).
    mutating func remove(_ number: Int) {
        channels.removeValue(forKey: number)
        idleGeneration.removeValue(forKey: number)
        compactIfSparse()
    }

    mutating func removeAll() {
        channels = [:]
        idleGeneration = [:]
        idleOrder.removeAll()
    }

    private mutating func takeOldestIdle() -> (any Channel)? {
        while let entry = idleOrder.popFirst() {
            guard idleGeneration[entry.number] == entry.generation, let channel = channels[entry.number] else {
                continue
            }
            remove(entry.number)
            return channel
        }
        return nil
    }

    /// Stale entries (connections that became busy or left) are dropped once they outnumber
    /// the live ones, so the order stays within a small multiple of the open connections.
    private mutating func compactIfSparse() {
        guard idleOrder.count > 2 * idleGeneration.count + 64 else { return }
        let live = idleOrder.filter { idleGeneration[$0.number] == $0.generation }
        idleOrder = CircularBuffer(live)
    }
}
