import Foundation

/// The JSON shape of everything the tool reports, versioned by ``schemaVersion``.
///
/// Keys are snake_case; dates are RFC 3339 in UTC, always next to a computed `days_left` so
/// no consumer has to parse dates to make a decision.
///
/// A property spelled with an upper-case acronym (`teamID`) names its key `teamId` in its
/// `CodingKeys`: `.convertFromSnakeCase` reads `team_id` as `teamId`, never `teamID`, so that is
/// the only spelling that decodes what was written, and it encodes to the same `team_id`.
public enum ReportSchema {
    public static let schemaVersion = 1

    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = UTCTimestamp.parse(text) ?? (try? Date.ISO8601FormatStyle().parse(text)) { return date }
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Expected date string to be ISO8601-formatted."
            )
        }
        return decoder
    }
}

/// The one form of date the tool writes (`2026-11-27T21:26:23Z`, `.iso8601` of JSONEncoder), read
/// by arithmetic. `.iso8601` decoding reads it with `Date.ISO8601FormatStyle`, whose first use
/// sets up a calendar and a parser: about a millisecond of a cold `send`, spent on the store's
/// index before anything else can start (docs/performance.md). Any other text, or a field out of
/// its range, is left to `Date.ISO8601FormatStyle`, so what is read is what `.iso8601` reads (a
/// test holds the two together).
enum UTCTimestamp {
    static func parse(_ text: String) -> Date? {
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
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }
}
