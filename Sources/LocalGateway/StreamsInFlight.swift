import NIOCore

/// Streams open at once over time, across every connection, so that a test can see a sender
/// reduce what it has in flight after losses and grow it back.
///
/// Each connection reports how many of its streams are open whenever that changes; the total
/// is kept, and for each interval (100 ms to start with) the most that were open at once.
/// Bounded: past ``maxIntervals`` intervals, neighbouring intervals are merged and the
/// interval doubles (an hour at 100 ms fits); the peak of at most ``maxConnectionsListed``
/// connections is listed.
public struct StreamsInFlight: Sendable {
    public static let maxIntervals = 36_000
    public static let maxConnectionsListed = 10_000
    public static let startInterval = TimeAmount.milliseconds(100)

    private let start: NIODeadline
    private(set) var interval = StreamsInFlight.startInterval
    /// The most streams open at once in each interval since ``start``.
    private(set) var series: [Int] = []
    private var open: [Int: Int] = [:]
    private var total = 0
    private(set) var peakByConnection: [Int: Int] = [:]
    /// Connections whose peak is not listed, past ``maxConnectionsListed``.
    private(set) var connectionsNotListed = 0

    init(start: NIODeadline) {
        self.start = start
    }

    /// Connection `connection` has `count` streams open now.
    mutating func set(_ connection: Int, open count: Int, at now: NIODeadline) {
        let before = open[connection]
        if before == nil {
            if peakByConnection.count < Self.maxConnectionsListed {
                peakByConnection[connection] = 0
            } else {
                connectionsNotListed += 1
            }
        } else if before == count {
            return
        }
        open[connection] = count
        total += count - (before ?? 0)
        if let peak = peakByConnection[connection], count > peak { peakByConnection[connection] = count }
        note(at: now)
    }

    /// Connection `connection` closed: its streams are no longer open.
    mutating func closed(_ connection: Int, at now: NIODeadline) {
        guard let before = open.removeValue(forKey: connection) else { return }
        total -= before
        note(at: now)
    }

    /// Records the total in the interval `now` falls in (the intervals passed since the last
    /// change had the total as it was).
    private mutating func note(at now: NIODeadline) {
        var index = Int(max(0, (now - start).nanoseconds) / interval.nanoseconds)
        while index >= Self.maxIntervals {
            merge()
            index = Int(max(0, (now - start).nanoseconds) / interval.nanoseconds)
        }
        if series.count <= index {
            series.append(contentsOf: repeatElement(lastTotal, count: index + 1 - series.count))
        }
        series[index] = max(series[index], total)
        lastTotal = total
    }

    /// The total after the last change: what the intervals without a change had open.
    private var lastTotal = 0

    /// Halves the number of intervals: each pair becomes one, of twice the length.
    private mutating func merge() {
        series = stride(from: 0, to: series.count, by: 2).map { index in
            index + 1 < series.count ? max(series[index], series[index + 1]) : series[index]
        }
        interval = interval * 2
    }

    /// As the statistics file shows it.
    public var report: Report {
        Report(
            intervalMilliseconds: Int(interval.nanoseconds / 1_000_000),
            maxOpen: series,
            peakByConnection: Dictionary(uniqueKeysWithValues: peakByConnection.map { (String($0.key), $0.value) }),
            connectionsNotListed: connectionsNotListed
        )
    }

    public struct Report: Sendable, Equatable, Codable {
        /// The length of each interval of ``maxOpen``.
        public var intervalMilliseconds: Int
        /// The most streams open at once, all connections together, in each interval from the
        /// gateway's start.
        public var maxOpen: [Int]
        /// The most streams each connection had open at once, by connection number (as in the log).
        public var peakByConnection: [String: Int]
        public var connectionsNotListed: Int

        enum CodingKeys: String, CodingKey {
            case intervalMilliseconds = "interval_ms"
            case maxOpen = "max_open"
            case peakByConnection = "peak_by_connection"
            case connectionsNotListed = "connections_not_listed"
        }
    }
}
