import Foundation

/// A moment given the way people write it for `apns-expiration` and a Live Activity's dates: a
/// duration from now (`30m`, `1h`, `2d`, `45s`), an RFC 3339 date (`2026-05-01T12:00:00Z`), or
/// UNIX seconds (`1777636800`). APNs itself only takes UNIX seconds; this turns the other
/// forms into them, so nobody has to compute an epoch by hand.
public enum PushTime {
    /// What a written moment turned out to be.
    public enum Parsed: Sendable, Equatable {
        /// `0` for `apns-expiration`: try once, store nothing.
        case immediately
        case at(Date)
    }

    /// The largest UNIX time a header takes here (the end of 32-bit time, in 2106).
    public static let latest = Date(timeIntervalSince1970: TimeInterval(UInt32.max))

    /// Reads `text` relative to `now`. Throws ``PushCoreError`` with code `.invalidTime`, naming
    /// the forms it takes, for anything else.
    public static func parse(_ text: String, now: Date) throws -> Parsed {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "0" { return .immediately }
        if !trimmed.isEmpty, trimmed.allSatisfy(\.isASCIIDigit) {
            guard let seconds = UInt64(trimmed), seconds <= UInt64(UInt32.max) else {
                throw invalid(text, "\(trimmed) is beyond \(UInt32.max), the last UNIX second a header takes")
            }
            return .at(Date(timeIntervalSince1970: TimeInterval(seconds)))
        }
        if let unit = trimmed.last, let scale = unitSeconds[unit] {
            let digits = trimmed.dropLast()
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let count = Int(digits), count <= 36_500 * 86_400
            else { throw invalid(text, "a duration is a whole number followed by s, m, h or d") }
            let date = now.addingTimeInterval(TimeInterval(count) * scale).rounded
            guard date <= latest else { throw invalid(text, "that is after 2106, the last date a header takes") }
            return .at(date)
        }
        if let date = rfc3339(trimmed) {
            guard date.timeIntervalSince1970 >= 0, date <= latest else {
                throw invalid(text, "the date is outside 1970 to 2106, what a UNIX-seconds header can carry")
            }
            return .at(date)
        }
        throw invalid(text, "it is not a duration, an RFC 3339 date or UNIX seconds")
    }

    /// An `apns-expiration`: `0`, or a moment that has not passed yet. A moment in the past
    /// would make APNs drop the notification without trying (or answer BadExpirationDate),
    /// which is never what someone typing it meant.
    public static func expiration(_ text: String, now: Date) throws -> Date {
        switch try parse(text, now: now) {
        case .immediately:
            return Date(timeIntervalSince1970: 0)
        case .at(let date):
            try requireFuture(date, text: text, now: now, what: "expiration")
            return date
        }
    }

    /// A date inside a payload (`stale-date`, `dismissal-date`): `0` is not a date there.
    public static func date(_ text: String, now: Date, what: String, allowPast: Bool) throws -> Date {
        switch try parse(text, now: now) {
        case .immediately:
            throw PushCoreError(
                .invalidTime,
                "The \(what) \"\(text)\" is 0, which is 1 January 1970.",
                hint: "Give a duration from now such as 30m, an RFC 3339 date, or UNIX seconds."
            )
        case .at(let date):
            if !allowPast { try requireFuture(date, text: text, now: now, what: what) }
            return date
        }
    }

    static func requireFuture(_ date: Date, text: String, now: Date, what: String) throws {
        guard date > now else {
            let ago = Int(now.timeIntervalSince(date).rounded())
            throw PushCoreError(
                .invalidTime,
                "The \(what) \"\(text)\" (\(rfc3339String(date))) is \(ago) seconds in the past.",
                hint: what == "expiration"
                    ? "Give a time still to come, such as 1h or 2d from now, or 0 to have APNs try once and store nothing."
                    : "Give a time still to come, such as 30m or 2h from now."
            )
        }
    }

    static let unitSeconds: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]

    static func invalid(_ text: String, _ why: String) -> PushCoreError {
        PushCoreError(
            .invalidTime,
            "\"\(text)\" is not a time: \(why).",
            hint:
                "Write a duration from now (30m, 1h, 2d), an RFC 3339 date (2030-01-31T18:00:00Z), or UNIX seconds (1900000000)."
        )
    }

    /// RFC 3339 with or without fractional seconds, with `Z` or an offset, taken strictly: a day
    /// or time that does not exist (30 February, 25:00) is refused, not rolled over.
    static func rfc3339(_ text: String) -> Date? {
        guard
            let match = text.wholeMatch(
                of: /(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})/
            ),
            let hour = Int(match.4), let minute = Int(match.5), let second = Int(match.6),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard DateComponents(year: Int(match.1), month: Int(match.2), day: Int(match.3)).isValidDate(in: calendar)
        else { return nil }
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    /// The one form of date the tool writes (`2026-11-27T21:26:23Z`, JSONEncoder's `.iso8601`),
    /// read by arithmetic; nil for any other text, or a field out of its range, which the caller
    /// leaves to `Date.ISO8601FormatStyle` (`ReportSchema.decoder()`), so that what is read is
    /// what `.iso8601` reads (a test holds the two together). The format style's first use sets
    /// up a calendar and a parser: about a millisecond of a cold `send`, spent on the store's
    /// index before anything else can start (docs/performance.md).
    public static func utcTimestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1970...9999).contains(year), (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return nil }
        guard let midnight = utcMidnight(year: year, month: month, day: day) else { return nil }
        return midnight + TimeInterval(hour * 3_600 + minute * 60 + second)
    }

    /// The start of a day of the proleptic Gregorian calendar in UTC, by arithmetic (no
    /// `Calendar`, whose first use sets up ICU's calendar); nil for a month or day that does not
    /// exist, or a year before 1970.
    public static func utcMidnight(year: Int, month: Int, day: Int) -> Date? {
        guard year >= 1970, (1...12).contains(month) else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...monthDays[month - 1]).contains(day) else { return nil }
        // Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse).
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400))
    }

    /// `2026-05-01T12:00:00Z`.
    public static func rfc3339String(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// Whole UNIX seconds, as headers and payload dates carry them.
    public static func unixSeconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }
}

extension Date {
    /// Whole seconds: headers and payload dates carry no fractions.
    fileprivate var rounded: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
