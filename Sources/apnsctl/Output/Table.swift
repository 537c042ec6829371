import Foundation
import PushChecks

/// Measuring and shortening the text of a table's cells: ANSI codes take no width, and a cell
/// too wide for its column is shortened (a list keeps what fits and says "+N more"; other text
/// ends in "…") rather than wrapping.
enum Table {
    /// `cell` in at most `width` columns: a comma-separated list keeps its first items and says
    /// how many more there are; other text is cut with "…". Coloured cells are left alone.
    static func shorten(_ cell: String, to width: Int) -> String {
        guard visibleWidth(cell) > width, !cell.contains("\u{1B}"), width > 1 else { return cell }
        let items = cell.components(separatedBy: ", ")
        if items.count > 1 {
            for kept in stride(from: items.count - 1, through: 1, by: -1) {
                let candidate = items.prefix(kept).joined(separator: ", ") + " +\(items.count - kept) more"
                if candidate.count <= width { return candidate }
            }
            let more = " +\(items.count - 1) more"
            if more.count < width - 1 { return String(items[0].prefix(width - more.count - 1)) + "…" + more }
        }
        return String(cell.prefix(width - 1)) + "…"
    }

    /// Width on screen: ANSI escape sequences take none.
    static func visibleWidth(_ text: String) -> Int {
        var width = 0
        var inEscape = false
        for character in text {
            if inEscape {
                if character == "m" { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                width += 1
            }
        }
        return width
    }
}

extension TerminalStyle {
    /// A label and its value, the label dim and padded to `width`.
    func row(_ label: String, _ value: String, width: Int) -> String {
        "  \(paint(label.padding(toLength: width, withPad: " ", startingAt: 0), .dim))  \(value)"
    }

    /// Labelled rows, the labels padded to the widest; a value's further lines stay aligned under its first.
    func rows(_ rows: [(String, String)]) -> [String] {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.flatMap { label, value in
            value.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { index, line in
                row(index == 0 ? label : "", String(line), width: width)
            }
        }
    }

    /// A finding's label, "problem:" or "warning:", so that the two read apart without colour too.
    func label(_ severity: Finding.Severity) -> String {
        severity == .problem ? paint("problem:", .red, .bold) : paint("warning:", .yellow, .bold)
    }
}
