import Foundation

/// Dates as messages give them.
package enum MessageDate {
    /// The day alone, as ISO 8601 writes it (2026-11-27): what a certificate's validity is told in.
    package static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}
