import Foundation
import PushBulk
import PushGateway

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress display on a terminal's stderr, redrawn ten times a second:
/// `▕██████░░░░▏ 45,000/100,000 45%  12,345/s  3 rejected  ETA 0:05`.
///
/// The line always fits the terminal (down to 40 columns and below): what does not fit is left
/// out, least important first, so it never wraps, because a wrapped line is not erased by the next
/// redraw. Once ``finish()`` has run, nothing is drawn again.
final class ProgressBar: @unchecked Sendable {
    private let sender: BulkSender
    private let total: Int?
    private let style: TerminalStyle
    private var task: Task<Void, Never>?
    private let lock = NSLock()
    private var finished = false

    init(sender: BulkSender, total: Int?, style: TerminalStyle) {
        self.sender = sender
        self.total = total
        self.style = style
    }

    func start() {
        task = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 100_000_000)
                if Task.isCancelled { break }
                let progress = await sender.progress()
                draw("\r\u{1B}[2K" + line(progress, width: style.width))
            }
        }
    }

    /// Removes the bar, leaving the line empty for the summary; no redraw comes after it.
    func finish() {
        lock.withLock {
            guard !finished else { return }
            finished = true
            task?.cancel()
            task = nil
            writeAll(STDERR_FILENO, Array("\r\u{1B}[2K".utf8))
        }
    }

    private func draw(_ text: String) {
        lock.withLock {
            // A redraw that was computing while the run ended must not land after the summary.
            guard !finished else { return }
            writeAll(STDERR_FILENO, Array(text.utf8))
        }
    }

    /// One piece of the line, with its colour and how readily it is left out (higher: later).
    private struct Piece {
        var text: String
        var attribute: TerminalStyle.Attribute?
        var priority: Int
    }

    /// The line for `width` columns; never wider than `width - 1` visible characters.
    func line(_ progress: BulkProgress, width: Int) -> String {
        let room = max(1, width - 1)
        if !progress.connected { return style.paint(String("connecting…".prefix(room)), .dim) }
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        let rate = progress.elapsed > 0.2 ? Double(progress.finished) / progress.elapsed : 0
        var pieces: [Piece] = []
        var fraction: Double?
        if let total, total > 0 {
            fraction = min(1, Double(progress.finished) / Double(total))
            pieces.append(Piece(text: "\(count(progress.finished))/\(count(total))", priority: 9))
            pieces.append(Piece(text: String(format: "%3d%%", Int(fraction! * 100)), priority: 8))
        } else {
            pieces.append(Piece(text: "\(count(progress.finished)) done", priority: 9))
        }
        pieces.append(Piece(text: "\(count(Int(rate)))/s", priority: 5))
        if progress.rejected > 0 {
            pieces.append(Piece(text: "\(count(progress.rejected)) rejected", attribute: .yellow, priority: 7))
        }
        if progress.failed > 0 {
            pieces.append(Piece(text: "\(count(progress.failed)) failed", attribute: .red, priority: 7))
        }
        pieces.append(Piece(text: "\(count(progress.inFlight)) in flight", priority: 2))
        if let total, rate > 0, total > progress.finished {
            let remaining = Int(Double(total - progress.finished) / rate)
            pieces.append(Piece(text: "ETA " + String(format: "%d:%02d", remaining / 60, remaining % 60), priority: 4))
        }
        // Leave out the least important pieces until the text fits beside a bar of at least 10
        // cells (when there is a total), or alone on a terminal too narrow for the bar.
        let separator = 2
        let smallestBar = 10 + 2 + separator
        func length(_ list: [Piece]) -> Int {
            list.reduce(0) { $0 + $1.text.count } + separator * max(0, list.count - 1)
        }
        func fitted(within limit: Int) -> [Piece] {
            var kept = pieces
            while length(kept) > limit, kept.count > 1,
                let lowest = kept.indices.min(by: { kept[$0].priority < kept[$1].priority })
            {
                kept.remove(at: lowest)
            }
            return kept
        }
        var kept = fitted(within: fraction == nil ? room : room - smallestBar)
        let showBar = fraction != nil && length(kept) <= room - smallestBar
        if !showBar { kept = fitted(within: room) }
        if length(kept) > room { return String(kept[0].text.prefix(room)) }
        var text = kept.map { style.paint($0.text, $0.attribute.map { [$0] } ?? []) }.joined(separator: "  ")
        if let fraction, showBar {
            // The bar takes what is left, from 10 to 30 cells.
            let barWidth = min(30, room - length(kept) - separator - 2)  // at least 10: see showBar
            let filled = Int((fraction * Double(barWidth)).rounded(.down))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled)
            text = "▕" + style.paint(bar, .cyan) + "▏" + String(repeating: " ", count: separator) + text
        }
        return text
    }
}
