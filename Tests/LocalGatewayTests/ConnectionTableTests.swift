import NIOCore
import NIOEmbedded
import Testing

@testable import LocalGateway

/// The table of open connections: the cap, and which connection makes room for a new one.
@Suite struct ConnectionTableTests {
    /// `count` channels, numbered from 1, admitted in order.
    static func filled(cap: Int, count: Int) -> (ConnectionTable, [Int: EmbeddedChannel]) {
        var table = ConnectionTable(cap: cap)
        var channels: [Int: EmbeddedChannel] = [:]
        for number in 1...count {
            let channel = EmbeddedChannel()
            channels[number] = channel
            if case .admitted = table.admit(number, channel) {} else { Issue.record("\(number) not admitted") }
        }
        return (table, channels)
    }

    /// The number of the channel a new connection `number` takes the place of (nil: admitted
    /// without shedding; -1: refused).
    static func shed(_ table: inout ConnectionTable, _ number: Int, _ channels: [Int: EmbeddedChannel]) -> Int? {
        switch table.admit(number, EmbeddedChannel()) {
        case .admitted: return nil
        case .refused: return -1
        case .shed(let channel): return channels.first { $0.value === channel }?.key
        }
    }

    @Test func underTheCapEveryConnectionIsAdmitted() {
        let (table, _) = Self.filled(cap: 3, count: 3)
        #expect(table.count == 3)
        #expect(table.idleCount == 3, "a connection is idle until it has an answer to wait for")
    }

    @Test func atTheCapTheConnectionIdleTheLongestMakesRoom() {
        var (table, channels) = Self.filled(cap: 3, count: 3)
        // Connection 2 has answered something since it was accepted: the most recently idle.
        table.becameBusy(2)
        table.becameIdle(2)
        #expect(Self.shed(&table, 4, channels) == 1, "the oldest of three idle connections")
        #expect(table.count == 3)
        #expect(Self.shed(&table, 5, channels) == 3)
        #expect(Self.shed(&table, 6, channels) == 2)
    }

    @Test func aConnectionAwaitingAnAnswerIsNotShedAndNoneIdleRefusesTheNewcomer() {
        var (table, channels) = Self.filled(cap: 2, count: 2)
        table.becameBusy(1)
        #expect(Self.shed(&table, 3, channels) == 2, "the busy one is passed over")
        table.becameBusy(3)
        #expect(Self.shed(&table, 4, channels) == -1, "every connection awaits an answer: refused")
        #expect(table.count == 2)
        table.becameIdle(1)
        #expect(Self.shed(&table, 5, channels) == 1)
    }

    @Test func aClosedConnectionFreesItsPlace() {
        var (table, channels) = Self.filled(cap: 2, count: 2)
        table.remove(1)
        #expect(Self.shed(&table, 3, channels) == nil)
        #expect(table.count == 2)
    }

    @Test func staleEntriesDoNotAccumulate() {
        var (table, channels) = Self.filled(cap: 4, count: 4)
        // A busy connection answering over and over: its entries are compacted away.
        for _ in 0..<10_000 {
            table.becameBusy(4)
            table.becameIdle(4)
        }
        #expect(table.orderLength <= 2 * table.idleCount + 64)
        #expect(Self.shed(&table, 5, channels) == 1)
    }
}
