import CredentialFormats
import Foundation
import PushCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ANSI styling that switches itself off when the stream is not a terminal or NO_COLOR is set.
struct TerminalStyle {
    enum Attribute: String {
        case bold = "1"
        case dim = "2"
        case red = "31"
        case green = "32"
        case yellow = "33"
        case blue = "34"
        case cyan = "36"
    }

    let enabled: Bool
    let isTerminal: Bool
    /// The stream this style writes to: its own terminal's width is the one that counts.
    let fileDescriptor: Int32

    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        isTerminal = isatty(fileDescriptor) == 1
        let noColor = ProcessEnvironment.value("NO_COLOR").map { !$0.isEmpty } ?? false
        enabled = isTerminal && !noColor && ProcessEnvironment.value("TERM") != "dumb"
    }

    static var stdout: TerminalStyle { TerminalStyle(fileDescriptor: STDOUT_FILENO) }
    static var stderr: TerminalStyle { TerminalStyle(fileDescriptor: STDERR_FILENO) }

    func paint(_ text: String, _ attributes: Attribute...) -> String { paint(text, attributes) }

    func paint(_ text: String, _ attributes: [Attribute]) -> String {
        guard enabled, !attributes.isEmpty else { return text }
        return "\u{1B}[\(attributes.map(\.rawValue).joined(separator: ";"))m\(text)\u{1B}[0m"
    }

    /// The width output must fit: the terminal's, or `COLUMNS` when it is set; nil for a file or a
    /// pipe without `COLUMNS`, where nothing needs shortening.
    var fittingWidth: Int? {
        if let columns = ProcessEnvironment.value("COLUMNS").flatMap(Int.init), columns > 0 {
            return columns
        }
        return isTerminal ? width : nil
    }

    /// The terminal's width, or 100 when it cannot be told.
    var width: Int {
        var size = winsize()
        if isTerminal, ioctl(fileDescriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 100
    }
}
