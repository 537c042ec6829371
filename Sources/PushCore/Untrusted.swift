/// Text that came from outside (a certificate's subject and topics, an alias, a file name, a
/// server's reason) made safe to show: control characters become visible caret notation (ESC is
/// `^[`, CR `^M`, BEL `^G`, a newline `^J`), and the C1 controls and bidirectional overrides
/// become `<U+XXXX>`. Nothing in it can then move the cursor, clear a screen, set a terminal's
/// title, fake a line of output, or break a line of a metrics file.
public enum Untrusted {
    public static func display(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F:
                result += "^" + String(UnicodeScalar(UInt8(scalar.value + 0x40)))
            case 0x7F:
                result += "^?"
            case _ where isUnsafe(scalar):
                result += "<U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + ">"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// C0 and C1 controls, DEL, and the bidirectional embedding, override and isolate marks.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
