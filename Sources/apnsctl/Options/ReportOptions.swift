import ArgumentParser
import CredentialFormats
import Foundation
import PushStore

/// Options every reporting command shares.
struct ReportOptions: ParsableArguments {
    @Flag(help: "Print a versioned JSON report instead of human output.")
    var json = false

    @Option(help: ArgumentHelp("Report certificates that expire within this many days.", valueName: "N"))
    var warnDays = 30

    @Option(
        help: ArgumentHelp(
            "Evaluate validity at this date instead of now (YYYY-MM-DD or RFC 3339), e.g. your release date.",
            valueName: "DATE"
        )
    )
    var at: String?

    func validate() throws {
        if warnDays < 0 { throw ValidationError("--warn-days must be 0 or more.") }
        if let at, Self.parseDate(at) == nil {
            throw ValidationError("--at takes a date such as 2027-01-31 or 2027-01-31T12:00:00Z, not \"\(at)\".")
        }
    }

    var date: Date { at.flatMap(Self.parseDate) ?? Date() }

    /// A date as RFC 3339 writes it (`2027-01-31` or `2027-01-31T12:00:00Z`), taken strictly:
    /// a day or time that does not exist (2027-02-30, 24:61) is refused, not rolled over into
    /// the next month.
    static func parseDate(_ text: String) -> Date? {
        guard
            let match = text.wholeMatch(
                of: /(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2}))?/
            )
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: Int(match.1), month: Int(match.2), day: Int(match.3))
        guard components.isValidDate(in: calendar) else { return nil }
        if let hour = match.4.flatMap({ Int($0) }), let minute = match.5.flatMap({ Int($0) }),
            let second = match.6.flatMap({ Int($0) }), hour > 23 || minute > 59 || second > 60
        {
            return nil
        }
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }
}

/// Writes a report as JSON with its schema version on top.
func printJSON<T: Encodable>(_ value: T) throws {
    let data = try ReportSchema.encoder().encode(value)
    JSONFailure.printed = true
    try writeStandardOutput([UInt8](data) + [0x0A])
}
