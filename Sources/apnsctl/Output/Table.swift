import Foundation

/// A plain text table whose columns fit their widest cell, measuring text without ANSI codes,
/// and the whole table fits the terminal: the widest plain cells are shortened (a list keeps
/// what fits and says "+N more"; other text ends in "…") rather than wrapping every row.
final class Table {
    let headers: [String]
    private(set) var rows: [[String]] = []

    init(headers: [String]) { self.headers = headers }

    func add(_ row: [String]) { rows.append(row) }

    /// `width`: the columns to fit in; by default the terminal's when the output is one (or
    /// `COLUMNS` says), and no limit when it goes to a file or a pipe.
    func render(style: TerminalStyle, width: Int? = nil) -> String {
        var widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(Self.visibleWidth).max() ?? 0
        }
        var cells = rows
        if let limit = width ?? style.fittingWidth {
            func total() -> Int { widths.reduce(0, +) + 2 * max(0, widths.count - 1) }
            // A column can give up width when its cells are plain text, down to 6 columns (its
            // header is then shortened too); the widest give first.
            let shrinkable = headers.indices.map { column in rows.allSatisfy { !$0[column].contains("\u{1B}") } }
            let minimum = headers.indices.map { _ in 6 }
            while total() > limit,
                let column = widths.indices.filter({ shrinkable[$0] && widths[$0] > minimum[$0] })
                    .max(by: { widths[$0] < widths[$1] })
            {
                widths[column] -= 1
            }
            cells = rows.map { row in row.indices.map { Self.shorten(row[$0], to: widths[$0]) } }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1
                    ? cell : cell + String(repeating: " ", count: max(0, widths[index] - Self.visibleWidth(cell)))
            }.joined(separator: "  ")
        }
        let heads = headers.indices.map { Self.shorten(headers[$0], to: widths[$0]) }
        return ([style.paint(line(heads), .bold)] + cells.map(line)).joined(separator: "\n")
    }

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
