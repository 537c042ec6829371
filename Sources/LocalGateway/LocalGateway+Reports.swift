import CredentialFormats
import Foundation

extension LocalGateway {
    /// The statistics file: every ``Statistics`` key, and when followed, `display` (the run's
    /// ``DeviceDisplay/Totals``), `devices` (each device's ``DeviceDisplay/Counters`` by token) and
    /// `streams_in_flight` (``StreamsInFlight/Report``). docs/schemas/gateway-stats.schema.json.
    public struct StatisticsFile: Encodable, Sendable {
        public var statistics: Statistics
        public var display: DeviceDisplay?
        public var streamsInFlight: StreamsInFlight.Report?

        enum CodingKeys: String, CodingKey {
            case display, devices
            case streamsInFlight = "streams_in_flight"
        }

        public func encode(to encoder: any Encoder) throws {
            // The statistics' keys stay at the top, where scripts already read them.
            try statistics.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let display {
                try container.encode(display.totals, forKey: .display)
                try container.encode(display.counters, forKey: .devices)
            }
            try container.encodeIfPresent(streamsInFlight, forKey: .streamsInFlight)
        }
    }

    /// One line of the shown file: a device and what a person would see on it, oldest first.
    /// docs/schemas/gateway-shown-line.schema.json.
    public struct ShownLine: Codable, Sendable, Equatable {
        public var deviceToken: String
        public var delivered: Int
        public var shown: Int
        public var evicted: Int
        public var notifications: [DeviceDisplay.Shown]

        enum CodingKeys: String, CodingKey {
            case delivered, shown, evicted, notifications
            case deviceToken = "device_token"
        }
    }

    /// What the statistics file holds now.
    public var statisticsFile: StatisticsFile {
        state.withLockedValue {
            StatisticsFile(statistics: $0.statistics, display: $0.display, streamsInFlight: $0.streamsInFlight?.report)
        }
    }

    /// The shown file's lines now, by device token.
    public var shownLines: [ShownLine] {
        guard let display = deviceDisplay else { return [] }
        let held = display.held
        return display.counters.sorted { $0.key < $1.key }.map { token, counters in
            ShownLine(
                deviceToken: token,
                delivered: counters.delivered,
                shown: counters.shown,
                evicted: counters.evicted,
                notifications: held[token] ?? []
            )
        }
    }

    /// Writes the statistics and shown files `files` names, each whole or not at all (a
    /// temporary file renamed into place), mode 0600: they say which devices were sent what.
    func writeReports(_ files: ServeFiles) throws {
        if let path = files.statistics {
            let data = try ReportSchema.encoder().encode(statisticsFile)
            try PrivateFile.write([UInt8](data), to: path, overwrite: true)
        }
        if let path = files.shown {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var bytes: [UInt8] = []
            for line in shownLines {
                bytes += try encoder.encode(line)
                bytes.append(0x0A)
            }
            try PrivateFile.write(bytes, to: path, overwrite: true)
        }
    }
}
