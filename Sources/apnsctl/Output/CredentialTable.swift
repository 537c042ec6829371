import Foundation

/// The table `list` prints, laid out for the width it has.
///
/// The alias is what every other command takes and the expiry date is why people list, so
/// neither is ever cut. When the full table is too wide, the layout gives way in a stated order:
/// first lossless compaction (short headers, `both`/`prod` for environments), then the topics
/// column shrinks and goes, then kind, days left and status go. Below 50 columns, or when even
/// alias, environments and date do not fit side by side, each credential becomes a short block
/// of `name: value` lines, wrapped, never cut. Nothing is shortened for a pipe or a file.
struct CredentialTable {
    struct Row {
        var alias: String
        var kind: String
        var topics: [String]
        var environments: String
        var compactEnvironments: String
        var expires: String
        /// The date in the status's colour, shown when the status column had to go.
        var paintedExpires: String
        var daysLeft: String
        /// Painted for the terminal when colours are on.
        var status: String
    }

    enum Column: CaseIterable {
        case alias, kind, topics, environments, expires, daysLeft, status

        func header(compact: Bool) -> String {
            switch self {
            case .alias: return "ALIAS"
            case .kind: return "KIND"
            case .topics: return "TOPICS"
            case .environments: return compact ? "ENV" : "ENVIRONMENTS"
            case .expires: return "EXPIRES"
            case .daysLeft: return compact ? "DAYS" : "DAYS LEFT"
            case .status: return "STATUS"
            }
        }
    }

    /// One way of laying the table out; tried in order until one fits.
    struct Layout {
        var columns: [Column]
        var compact: Bool
        /// The topics column may give up width, down to this many columns.
        var topicsMinimum: Int?
    }

    /// The narrowest width at which a table is still easier to read than blocks.
    static let blockWidth = 50

    static let layouts: [Layout] = {
        let all = Column.allCases
        func without(_ dropped: [Column]) -> [Column] { all.filter { !dropped.contains($0) } }
        return [
            Layout(columns: all, compact: false),
            Layout(columns: all, compact: true),
            Layout(columns: all, compact: true, topicsMinimum: 12),
            Layout(columns: without([.topics]), compact: true),
            Layout(columns: without([.topics, .kind]), compact: true),
            Layout(columns: without([.topics, .kind, .daysLeft]), compact: true),
            Layout(columns: without([.topics, .kind, .daysLeft, .status]), compact: true),
        ]
    }()

    var rows: [Row] = []

    /// `width`: the columns to fit in; nil for no limit (a file or a pipe).
    func render(style: TerminalStyle, width: Int?) -> String {
        guard let width else { return table(Self.layouts[0], style: style, width: nil) }
        if width >= Self.blockWidth {
            for layout in Self.layouts where fits(layout, width: width) {
                return table(layout, style: style, width: width)
            }
        }
        return blocks(style: style, width: width)
    }

    private func cell(_ row: Row, _ column: Column, compact: Bool) -> String {
        switch column {
        case .alias: return row.alias
        case .kind: return row.kind
        case .topics: return row.topics.isEmpty ? "-" : row.topics.joined(separator: ", ")
        case .environments: return compact ? row.compactEnvironments : row.environments
        case .expires: return row.expires
        case .daysLeft: return row.daysLeft
        case .status: return row.status
        }
    }

    private func naturalWidth(_ column: Column, compact: Bool) -> Int {
        ([column.header(compact: compact)] + rows.map { cell($0, column, compact: compact) })
            .map(Table.visibleWidth).max() ?? 0
    }

    private func fits(_ layout: Layout, width: Int) -> Bool {
        let widths = layout.columns.map { column in
            column == .topics && layout.topicsMinimum != nil
                ? min(naturalWidth(column, compact: layout.compact), layout.topicsMinimum!)
                : naturalWidth(column, compact: layout.compact)
        }
        return widths.reduce(0, +) + 2 * max(0, widths.count - 1) <= width
    }

    private func table(_ layout: Layout, style: TerminalStyle, width: Int?) -> String {
        var widths = layout.columns.map { naturalWidth($0, compact: layout.compact) }
        if let width, let topics = layout.columns.firstIndex(of: .topics), layout.topicsMinimum != nil {
            let others = widths.enumerated().filter { $0.offset != topics }.map(\.element).reduce(0, +)
            widths[topics] = min(widths[topics], width - others - 2 * (widths.count - 1))
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1
                    ? cell : cell + String(repeating: " ", count: max(0, widths[index] - Table.visibleWidth(cell)))
            }.joined(separator: "  ")
        }
        let header = line(layout.columns.map { $0.header(compact: layout.compact) })
        let body = rows.map { row in
            line(
                layout.columns.enumerated().map { index, column in
                    let text = cell(row, column, compact: layout.compact)
                    if column == .expires, !layout.columns.contains(.status) { return row.paintedExpires }
                    return column == .topics ? Table.shorten(text, to: widths[index]) : text
                }
            )
        }
        return ([style.paint(header, .bold)] + body).joined(separator: "\n")
    }

    /// Each credential as its alias and indented `name: value` lines, wrapped at `width`.
    private func blocks(style: TerminalStyle, width: Int) -> String {
        rows.map { row in
            var lines = Self.wrap(row.alias, width: width, indent: "").map { style.paint($0, .bold) }
            func field(_ name: String, _ value: String) {
                // A painted value is a short word: it is never wrapped, so its codes stay whole.
                lines +=
                    value.contains("\u{1B}")
                    ? ["  \(name): \(value)"] : Self.wrap("\(name): \(value)", width: width, indent: "  ")
            }
            field("kind", row.kind)
            let topics = row.topics.isEmpty ? "-" : row.topics.joined(separator: ", ")
            if row.topics.count > 1, Table.visibleWidth("  topics: \(topics)") > width {
                // One topic a line: a topic is split across two only when it is wider than the line.
                lines.append("  topics:")
                for topic in row.topics { lines += Self.wrap(topic, width: width, indent: "    ") }
            } else {
                field("topics", topics)
            }
            field("environments", row.environments)
            field("expires", row.daysLeft == "-" ? row.expires : "\(row.expires) (\(row.daysLeft) days left)")
            field("status", row.status)
            return lines.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    /// `text` in lines of at most `width` columns, each starting with `indent`; continuation
    /// lines are indented two more. Breaks at a space, dot or dash where one is near, else
    /// mid-word.
    static func wrap(_ text: String, width: Int, indent: String) -> [String] {
        var lines: [String] = []
        var rest = Substring(text)
        var prefix = indent
        while !rest.isEmpty {
            let room = max(1, width - prefix.count)
            if rest.count <= room {
                lines.append(prefix + rest)
                break
            }
            let limit = rest.index(rest.startIndex, offsetBy: room)
            var end = limit
            // After a space, dot or dash near the end of the line, so a name breaks where it reads.
            if let mark = rest[..<limit].lastIndex(where: { " .-".contains($0) }),
                rest.distance(from: rest.startIndex, to: mark) > room / 2
            {
                end = rest[mark] == " " ? mark : rest.index(after: mark)
            }
            lines.append(prefix + rest[..<end])
            rest = rest[end...].drop { $0 == " " }
            prefix = indent + "  "
        }
        return lines
    }
}
