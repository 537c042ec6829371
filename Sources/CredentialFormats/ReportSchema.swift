import Foundation
import PushCore

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

    /// A date as reports and the store write it (`2026-11-28T06:33:47Z`), or in any other
    /// ISO 8601 form; nil for anything else.
    public static func date(from text: String) -> Date? {
        PushTime.utcTimestamp(text) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = date(from: text) { return date }
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Expected date string to be ISO8601-formatted."
            )
        }
        return decoder
    }
}
