import Foundation

/// A plain text table whose columns fit their widest cell, measuring text without ANSI codes.
final class Table {
    let headers: [String]
    private(set) var rows: [[String]] = []

    init(headers: [String]) { self.headers = headers }

    func add(_ row: [String]) { rows.append(row) }

    func render(style: TerminalStyle) -> String {
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(Self.visibleWidth).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1
                    ? cell : cell + String(repeating: " ", count: widths[index] - Self.visibleWidth(cell))
            }.joined(separator: "  ")
        }
        return ([style.paint(line(headers), .bold)] + rows.map(line)).joined(separator: "\n")
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
