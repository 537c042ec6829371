import Foundation

/// Rewrites INTEGER values inside DER, the way a hand with a hex editor would, re-encoding the
/// lengths of every structure around them. It descends into OCTET STRINGs that hold DER
/// themselves (a PKCS#12 file's contents are DER inside an OCTET STRING), so that values the
/// openssl command-line tool would take minutes to write (an iteration count of 2³¹−1) can be
/// made from a file written with small, distinctive ones.
public enum DEREdit {
    /// `der` with every INTEGER equal to `old` set to `new`; nil when `der` is not DER.
    /// `nested`: whether INTEGERs in DER inside OCTET STRINGs change too (a PKCS#12 file's
    /// encryption parameters) or only those outside (its MAC's).
    public static func replacingIntegers(_ der: [UInt8], _ old: Int, with new: Int, nested: Bool = true) -> [UInt8]? {
        rewrite(der[...], old: old, new: new, nested: nested)
    }

    private static func rewrite(_ bytes: ArraySlice<UInt8>, old: Int, new: Int, nested: Bool) -> [UInt8]? {
        var output: [UInt8] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let tag = bytes[index]
            // Single-byte tags only: PKCS#12, PKCS#7 and X.509 use no other.
            guard tag & 0x1F != 0x1F, index + 1 < bytes.endIndex else { return nil }
            var cursor = index + 1
            var length = Int(bytes[cursor])
            cursor += 1
            if length & 0x80 != 0 {
                let octets = length & 0x7F
                guard octets > 0, octets <= 4, cursor + octets <= bytes.endIndex else { return nil }
                length = 0
                for _ in 0..<octets {
                    length = length << 8 | Int(bytes[cursor])
                    cursor += 1
                }
            }
            guard cursor + length <= bytes.endIndex else { return nil }
            let value = bytes[cursor..<(cursor + length)]
            var newValue = Array(value)
            if tag & 0x20 != 0 {
                guard let inner = rewrite(value, old: old, new: new, nested: nested) else { return nil }
                newValue = inner
            } else if tag == 0x02, integer(value) == old {
                newValue = encode(new)
            } else if nested, tag == 0x04, value.first == 0x30,
                let inner = rewrite(value, old: old, new: new, nested: nested)
            {
                newValue = inner
            }
            output.append(tag)
            output += encodeLength(newValue.count)
            output += newValue
            index = cursor + length
        }
        return output
    }

    private static func integer(_ value: ArraySlice<UInt8>) -> Int? {
        guard !value.isEmpty, value.count <= 8, value.first! & 0x80 == 0 else { return nil }
        return value.reduce(0) { $0 << 8 | Int($1) }
    }

    private static func encode(_ number: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = number
        repeat {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        } while rest > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return bytes
    }

    private static func encodeLength(_ length: Int) -> [UInt8] {
        if length < 0x80 { return [UInt8(length)] }
        var bytes: [UInt8] = []
        var rest = length
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
