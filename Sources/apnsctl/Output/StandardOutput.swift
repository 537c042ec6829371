import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every command prints goes through here: Swift's own `print` ignores write errors, so
/// `apnsctl check > /dev/full` would say nothing and exit 0. A failed write is remembered, and
/// the command then ends with exit 2 and a message (see ``APNSCtl/main()``).
enum StandardOutput {
    /// Why standard output could not be written, if it could not.
    static var failure: String? { RunContext.current[\.outputFailure] }

    /// What `body` prints, returned instead of written (for a report that goes to a file).
    static func capture(_ body: () -> Void) -> String {
        RunContext.current[\.captured] = ""
        body()
        return RunContext.current.with { state in
            defer { state.captured = nil }
            return state.captured ?? ""
        }
    }

    static func write(_ text: String) {
        RunContext.current.with { state in
            if state.captured != nil {
                state.captured! += text
                return
            }
            guard state.outputFailure == nil else { return }
            if !writeAll(STDOUT_FILENO, Array(text.utf8)) { state.outputFailure = String(cString: strerror(errno)) }
        }
    }
}

private let colourOut = TerminalStyle.stdout
let colourErr = TerminalStyle.stderr

/// Shadows Swift's `print` in this module, so that no command can print without the write being
/// checked.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    StandardOutput.write(
        TerminalSafe.filter(items.map { "\($0)" }.joined(separator: separator) + terminator, colours: colourOut.enabled)
    )
}

/// The last line of defence for a terminal: whatever reaches standard output or standard error
/// goes through here. Line feeds, tabs and this tool's own colour and erase-line sequences
/// (CSI … m, CSI … K) pass; every other control character (an escape that clears the screen or
/// sets the title, a bell, a carriage return mid-line) is shown as caret notation instead of
/// acting. Fields that may hold a line feed of their own are made safe where they are printed
/// (``Untrusted/display(_:)``).
enum TerminalSafe {
    /// `colours`: whether this stream may carry colour sequences at all (a terminal, NO_COLOR
    /// unset); a file or a pipe gets none, so no escape character can reach it.
    static func filter(_ text: String, colours: Bool) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.contains(where: { Untrusted.isUnsafe($0) && $0 != "\n" && $0 != "\t" }) else { return text }
        var result = String.UnicodeScalarView()
        var index = 0
        // The progress bar's own erase-line, at the very start: "\r" ESC [ 2 K.
        if colours, scalars.starts(with: ["\r", "\u{1B}", "[", "2", "K"]) {
            result.append(contentsOf: scalars[0..<5])
            index = 5
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if colours, scalar == "\u{1B}", let end = ownSequenceEnd(scalars, from: index) {
                result.append(contentsOf: scalars[index...end])
                index = end + 1
                continue
            }
            if scalar == "\n" || scalar == "\t" || !Untrusted.isUnsafe(scalar) {
                result.append(scalar)
            } else {
                result.append(contentsOf: Untrusted.display(String(scalar)).unicodeScalars)
            }
            index += 1
        }
        return String(result)
    }

    /// The index of the last character of a colour sequence this tool writes (`ESC [ 1;31 m`)
    /// starting at `start`, if that is what it is.
    private static func ownSequenceEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        guard start + 2 < scalars.count, scalars[start + 1] == "[" else { return nil }
        var index = start + 2
        while index < scalars.count, ("0"..."9").contains(scalars[index]) || scalars[index] == ";" { index += 1 }
        guard index < scalars.count, scalars[index] == "m" else { return nil }
        return index
    }
}
