import Foundation
import PushCore

/// A connection's life in the engine: made for a slot, replaced when it leaves it, drained
/// with GOAWAY, closed.
extension BulkEngine {
    mutating func connect(slot: Int, delay: Double, into actions: inout [Action]) {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = Connection(id: id, slot: slot)
        slots[slot].connection = id
        actions.append(.connect(id, delay: delay))
    }

    /// A connection left its slot (GOAWAY, closed, draining): a new one takes its place while
    /// there is work.
    mutating func replace(_ connection: Connection, into actions: inout [Action]) {
        guard slots[connection.slot].connection == connection.id else { return }
        slots[connection.slot].connection = nil
        guard !stopping, !isFinished else { return }
        connect(slot: connection.slot, delay: 0, into: &actions)
    }

    mutating func goAwayAndDrain(_ id: ConnectionID, now: Double, into actions: inout [Action]) {
        guard let connection = connections[id], connection.state != .closed else { return }
        switch connection.state {
        case .draining, .closing: return
        default: break
        }
        connections[id]?.state =
            connection.inFlight.isEmpty
            ? .draining(deadline: -.infinity)
            : .draining(deadline: now + configuration.drainTimeout)
        actions.append(.goAway(connection.id))
        replace(connection, into: &actions)
        if connection.inFlight.isEmpty { close(id, into: &actions) }
    }

    /// Asks the driver to close the connection, once.
    mutating func close(_ id: ConnectionID, into actions: inout [Action]) {
        guard let connection = connections[id] else { return }
        switch connection.state {
        case .closing, .closed: return
        default: break
        }
        connections[id]?.state = .closing(lastStreamID: connection.lastStreamID)
        actions.append(.close(id))
    }

    mutating func closeAll(into actions: inout [Action]) {
        for id in connections.keys.sorted() { close(id, into: &actions) }
    }
}

extension BulkEngine.Connection {
    /// Takes the send off this connection's streams in flight and returns what it was.
    @discardableResult
    mutating func finishStream(_ sendID: BulkEngine.SendID) -> BulkEngine.InFlight? {
        guard let flight = inFlight.removeValue(forKey: sendID) else { return nil }
        if inFlight.isEmpty, case .draining = state {
            state = .draining(deadline: -.infinity)  // nothing left to wait for
        }
        return flight
    }
}
