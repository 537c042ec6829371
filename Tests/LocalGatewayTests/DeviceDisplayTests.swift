import NIOCore
import PushCore
import TestSupport
import Testing

@testable import LocalGateway

/// What a device would show after what was delivered: the same collapse id shown once, a copy of
/// the same apns-id counted, push types that show nothing, and the bounds that keep the counters.
@Suite struct DeviceDisplayTests {
    static let device = String(repeating: "ab", count: 32)
    static let other = String(repeating: "cd", count: 32)

    static func delivery(
        _ id: String,
        collapse: String? = nil,
        type: PushType = .alert,
        to device: String = device
    ) -> DeviceDisplay.Delivery {
        DeviceDisplay.Delivery(device: device, apnsID: id, collapseID: collapse, pushType: type)
    }

    @Test func theSameCollapseIDIsShownOnceAndTheLatestIsHeld() {
        var display = DeviceDisplay()
        display.deliver(Self.delivery("a", collapse: "score"))
        display.deliver(Self.delivery("c"))
        display.deliver(Self.delivery("b", collapse: "score"))
        let counters = display.counters[Self.device]
        #expect(counters?.delivered == 3)
        #expect(counters?.shown == 2)
        #expect(counters?.deliveredTwice == 0)
        #expect(counters?.shownTwice == 0)
        // The replacement takes the top of the list, with the later apns-id.
        #expect(display.held[Self.device]?.map(\.apnsID) == ["c", "b"])
        #expect(display.held[Self.device]?.last?.replacements == 1)
    }

    @Test func aResendWithTheSameCollapseIDIsDeliveredTwiceAndShownOnce() {
        var display = DeviceDisplay()
        display.deliver(Self.delivery("a", collapse: "a"))
        display.deliver(Self.delivery("a", collapse: "a"))
        let counters = display.counters[Self.device]
        #expect(counters?.delivered == 2)
        #expect(counters?.deliveredTwice == 1)
        #expect(counters?.shown == 1)
        #expect(counters?.shownTwice == 0)
    }

    @Test func aResendWithoutCollapseIDIsShownTwice() {
        var display = DeviceDisplay()
        for _ in 0..<3 { display.deliver(Self.delivery("a")) }
        let counters = display.counters[Self.device]
        #expect(counters?.delivered == 3)
        // One apns-id, delivered (and shown) more than once: counted once each.
        #expect(counters?.deliveredTwice == 1)
        #expect(counters?.shown == 3)
        #expect(counters?.shownTwice == 1)
        #expect(display.totals.devicesShownTwice == 1)
    }

    @Test(arguments: [
        PushType.background, .voip, .location, .pushtotalk, .complication, .fileprovider, .mdm, .widgets, .controls,
    ])
    func pushTypesThatShowNothingAreDeliveredNotShown(_ type: PushType) {
        var display = DeviceDisplay()
        display.deliver(Self.delivery("a", type: type))
        display.deliver(Self.delivery("a", type: type))
        let counters = display.counters[Self.device]
        #expect(counters?.delivered == 2)
        #expect(counters?.deliveredTwice == 1)
        #expect(counters?.shown == 0)
        #expect(display.held[Self.device] == [])
        #expect(!DeviceDisplay.shows(type))
    }

    @Test func liveActivityUpdatesCollapseAsAlertsDo() {
        var display = DeviceDisplay()
        display.deliver(Self.delivery("a", collapse: "match", type: .liveactivity))
        display.deliver(Self.delivery("b", collapse: "match", type: .liveactivity))
        #expect(display.counters[Self.device]?.shown == 1)
        #expect(display.held[Self.device]?.map(\.pushType) == ["liveactivity"])
    }

    @Test func devicesAreCountedApart() {
        var display = DeviceDisplay()
        display.deliver(Self.delivery("a", collapse: "x"))
        display.deliver(Self.delivery("b", collapse: "x", to: Self.other))
        #expect(display.counters[Self.device]?.shown == 1)
        #expect(display.counters[Self.other]?.shown == 1)
        let totals = display.totals
        #expect(totals.devices == 2)
        #expect(totals.delivered == 2)
        #expect(totals.shown == 2)
    }

    @Test func boundsLetContentsGoAndKeepTheCounters() {
        var limits = DeviceDisplay.Limits()
        limits.devices = 1
        limits.heldPerDevice = 2
        limits.rememberedPerDevice = 3
        var display = DeviceDisplay(limits: limits)
        for id in ["1", "2", "3", "4"] { display.deliver(Self.delivery(id)) }
        // Only the latest two are held; the counters saw all four.
        #expect(display.held[Self.device]?.map(\.apnsID) == ["3", "4"])
        #expect(display.counters[Self.device]?.shown == 4)
        #expect(display.counters[Self.device]?.evicted == 2)
        // "1" is forgotten (three remembered): a copy of it now looks new.
        display.deliver(Self.delivery("1"))
        #expect(display.counters[Self.device]?.deliveredTwice == 0)
        // "4" is remembered: its copy is counted.
        display.deliver(Self.delivery("4"))
        #expect(display.counters[Self.device]?.deliveredTwice == 1)
        #expect(display.counters[Self.device]?.shownTwice == 1)
        // A second device is past the bound: counted, not followed.
        display.deliver(Self.delivery("z", to: Self.other))
        #expect(display.counters[Self.other] == nil)
        #expect(display.untrackedDeliveries == 1)
        #expect(display.totals.untrackedDeliveries == 1)
    }

    @Test func forgettingManyKeepsTheLatestRemembered() {
        var limits = DeviceDisplay.Limits()
        limits.rememberedPerDevice = 4
        var display = DeviceDisplay(limits: limits)
        for number in 0..<50 { display.deliver(Self.delivery("\(number)", type: .background)) }
        for number in 46..<50 { display.deliver(Self.delivery("\(number)", type: .background)) }
        #expect(display.counters[Self.device]?.deliveredTwice == 4)
        display.deliver(Self.delivery("45", type: .background))
        #expect(display.counters[Self.device]?.deliveredTwice == 4)
    }
}

/// The streams open at once over time, across connections.
@Suite struct StreamsInFlightTests {
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static func at(_ milliseconds: Int64) -> NIODeadline { start + .milliseconds(milliseconds) }

    @Test func eachIntervalHoldsTheMostOpenAtOnceOverAllConnections() {
        var streams = StreamsInFlight(start: Self.start)
        streams.set(1, open: 10, at: Self.at(5))
        streams.set(2, open: 5, at: Self.at(50))
        streams.set(1, open: 2, at: Self.at(150))
        streams.set(2, open: 1, at: Self.at(160))
        // Nothing changes for a while: the intervals in between had what was open.
        streams.closed(1, at: Self.at(420))
        let report = streams.report
        #expect(report.intervalMilliseconds == 100)
        // 15 were still open when the second interval began.
        #expect(report.maxOpen == [15, 15, 3, 3, 3])
        #expect(report.peakByConnection == ["1": 10, "2": 5])
        #expect(report.connectionsNotListed == 0)
    }

    @Test func aLongRunMergesIntervalsRatherThanGrowing() {
        var streams = StreamsInFlight(start: Self.start)
        streams.set(1, open: 3, at: Self.at(0))
        let late = Int64(StreamsInFlight.maxIntervals) * 100 + 50
        streams.set(1, open: 7, at: Self.at(late))
        let report = streams.report
        #expect(report.intervalMilliseconds == 200)
        #expect(report.maxOpen.count <= StreamsInFlight.maxIntervals)
        #expect(report.maxOpen.first == 3)
        #expect(report.maxOpen.last == 7)
    }
}
