import Foundation

/// One `-----BEGIN X-----` ... `-----END X-----` block of a PEM file.
package struct PEMBlock {
    /// The label: `CERTIFICATE`, `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, `RSA PRIVATE KEY`...
    package var label: String
    /// The block as it stood, header lines included (what OpenSSL's PEM reader wants).
    package var text: String
    /// Header lines inside the block such as `Proc-Type: 4,ENCRYPTED`.
    package var headers: [String: String]
    /// The decoded body; nil when the base64 is damaged.
    package var der: [UInt8]?

    var isPrivateKey: Bool { label.hasSuffix("PRIVATE KEY") }
    var isEncrypted: Bool {
        label == "ENCRYPTED PRIVATE KEY" || headers["Proc-Type"]?.contains("ENCRYPTED") == true
    }

    /// Splits a PEM text into blocks, skipping anything outside them: OpenSSL's "Bag Attributes"
    /// lines, `subject=`/`issuer=` comments, blank lines.
    package static func blocks(in text: String) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var current: (label: String, lines: [String])?
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if current == nil, line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                let label = String(line.dropFirst("-----BEGIN ".count).dropLast(5))
                current = (label, [line])
            } else if var block = current {
                block.lines.append(line)
                if line == "-----END \(block.label)-----" {
                    blocks.append(makeBlock(label: block.label, lines: block.lines))
                    current = nil
                } else {
                    current = block
                }
            }
        }
        return blocks
    }

    private static func makeBlock(label: String, lines: [String]) -> PEMBlock {
        var headers: [String: String] = [:]
        var body = ""
        for line in lines.dropFirst().dropLast() {
            if let colon = line.firstIndex(of: ":") {
                headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            } else {
                body += line
            }
        }
        let der = Data(base64Encoded: body).map { [UInt8]($0) }
        return PEMBlock(
            label: label,
            text: lines.joined(separator: "\n") + "\n",
            headers: headers,
            der: der.flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    package static func encode(label: String, der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
    }
}
