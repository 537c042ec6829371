/// Bytes as hex text, written directly: `String(format: "%02x")` per byte builds a C variadic
/// argument list each time, and on its first use in a process asks the Swift runtime for
/// conformances it must search the whole program for (docs/performance.md, "The cold probe").
public enum HexText {
    /// `bytes` as hex digits, lower- or upper-case, with `separator` between bytes.
    public static func of<Bytes: Sequence<UInt8>>(
        _ bytes: Bytes,
        uppercase: Bool = false,
        separator: String = ""
    ) -> String {
        let digits: [Character] = Array(uppercase ? "0123456789ABCDEF" : "0123456789abcdef")
        var text = ""
        for (index, byte) in bytes.enumerated() {
            if index > 0 { text += separator }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
