import CredentialFormats
import Foundation
import PushCore
import Testing

/// The store's dates are read by arithmetic when they have the one form the tool writes, and by
/// `Date.ISO8601FormatStyle` otherwise: both must read every text alike.
@Suite struct UTCTimestampTests {
    /// Dates from 1970 to 9999: the edges, leap days, and 20,000 spread between them.
    static let dates: [Date] = {
        var seconds: [Int] = [
            0, 59, 86_399, 68_169_599, 951_782_400, 951_868_799, 4_107_542_400, 4_107_628_800,
            253_402_300_799,
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            seconds.append(Int(state >> 11) % 253_402_300_800)
        }
        return seconds.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }()

    @Test("Every date the tool writes is read back to the second, as Date.ISO8601FormatStyle reads it")
    func writtenDatesReadAlike() throws {
        let style = Date.ISO8601FormatStyle()
        for date in Self.dates {
            let text = style.format(date)
            let fast = try #require(PushTime.utcTimestamp(text), "\(text)")
            #expect(fast == date, "\(text)")
            #expect(fast == (try style.parse(text)), "\(text)")
        }
        // The encoder the tool writes with produces that form.
        let encoded = try ReportSchema.encoder().encode(["at": Date(timeIntervalSince1970: 1_795_815_983)])
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"2026-11-27T21:46:23Z\""))
    }

    static let otherTexts = [
        "2026-02-30T00:00:00Z", "2026-02-29T00:00:00Z", "2024-02-29T12:00:00Z", "1900-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-11-00T00:00:00Z", "2026-11-27T24:00:00Z",
        "2026-11-27T23:60:00Z", "2026-11-27T23:59:60Z", "2026-11-27T21:26:23+01:00", "2026-11-27T21:26:23.5Z",
        "2026-11-27t21:26:23z", "2026-11-27 21:26:23Z", "1969-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
        "+2026-11-27T21:26:23Z", "2026-11-27T21:26:23", "2026-11-27", "", "20261127T212623Z", "2026-1l-27T21:26:23Z",
    ]

    @Test("Any other text is left to Date.ISO8601FormatStyle, and the decoder reads it as .iso8601 does")
    func otherTextsAreLeftToTheFormatStyle() throws {
        for text in Self.otherTexts where !text.hasPrefix("2024-02-29") {
            #expect(PushTime.utcTimestamp(text) == nil, "\(text)")
        }
        #expect(PushTime.utcTimestamp("2024-02-29T12:00:00Z") != nil)
        let iso = JSONDecoder()
        iso.dateDecodingStrategy = .iso8601
        struct Stamp: Decodable { var at: Date }
        for text in Self.otherTexts + ["2026-11-27T21:26:23Z"] {
            let json = Data("{\"at\":\"\(text)\"}".utf8)
            let expected = try? iso.decode(Stamp.self, from: json).at
            let read = try? ReportSchema.decoder().decode(Stamp.self, from: json).at
            #expect(read == expected, "\(text)")
        }
    }

    @Test("A day's midnight by arithmetic is the Gregorian calendar's, and a day that does not exist is none")
    func midnightsAreTheCalendars() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for date in Self.dates.prefix(5_000) {
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let year = try #require(parts.year)
            let month = try #require(parts.month)
            let day = try #require(parts.day)
            #expect(
                PushTime.utcMidnight(year: year, month: month, day: day) == calendar.startOfDay(for: date),
                "\(year)-\(month)-\(day)"
            )
        }
        for (year, month, day) in [
            (2026, 2, 29), (2100, 2, 29), (2026, 4, 31), (2026, 13, 1), (1969, 12, 31), (2026, 1, 0),
        ] {
            #expect(PushTime.utcMidnight(year: year, month: month, day: day) == nil, "\(year)-\(month)-\(day)")
        }
        #expect(PushTime.utcMidnight(year: 2000, month: 2, day: 29) != nil)
    }
}
