import Foundation
import PushGateway

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress display on a terminal's stderr, redrawn ten times a second:
/// `▕██████░░░░▏ 45,000/100,000 45%  12,345/s  3 rejected  ETA 0:05`.
final class ProgressBar: @unchecked Sendable {
    private let sender: BulkSender
    private let total: Int?
    private let style: TerminalStyle
    private var task: Task<Void, Never>?

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
                writeAll(STDERR_FILENO, Array(("\r\u{1B}[2K" + line(progress)).utf8))
            }
        }
    }

    /// Removes the bar, leaving the line empty for the summary.
    func finish() {
        task?.cancel()
        task = nil
        writeAll(STDERR_FILENO, Array("\r\u{1B}[2K".utf8))
    }

    func line(_ progress: BulkSender.Progress) -> String {
        let count = { (value: Int) in value.formatted(.number.grouping(.automatic)) }
        let rate = progress.elapsed > 0.2 ? Double(progress.finished) / progress.elapsed : 0
        var parts: [String] = []
        if !progress.connected {
            return style.paint("connecting…", .dim)
        }
        if let total, total > 0 {
            let fraction = min(1, Double(progress.finished) / Double(total))
            let width = max(10, min(30, style.width - 70))
            let filled = Int((fraction * Double(width)).rounded(.down))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            parts.append("▕" + style.paint(bar, .cyan) + "▏")
            parts.append("\(count(progress.finished))/\(count(total))")
            parts.append(String(format: "%3d%%", Int(fraction * 100)))
        } else {
            parts.append("\(count(progress.finished)) done")
        }
        parts.append("\(count(Int(rate)))/s")
        if progress.rejected > 0 { parts.append(style.paint("\(count(progress.rejected)) rejected", .yellow)) }
        if progress.failed > 0 { parts.append(style.paint("\(count(progress.failed)) failed", .red)) }
        parts.append("\(count(progress.inFlight)) in flight")
        if let total, rate > 0, total > progress.finished {
            let remaining = Int(Double(total - progress.finished) / rate)
            parts.append("ETA " + String(format: "%d:%02d", remaining / 60, remaining % 60))
        }
        return parts.joined(separator: "  ")
    }
}
