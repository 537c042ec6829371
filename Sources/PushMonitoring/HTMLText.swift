import Foundation
import PushStore

/// HTML built by appending: markup the page writes itself (`raw`), and text that comes from
/// elsewhere (`text`), always escaped, so that no alias, subject or gateway answer can add
/// markup. Control characters are shown in caret notation first, as in every other output.
struct HTMLText {
    private(set) var text = ""

    mutating func raw(_ markup: String) { text += markup }

    mutating func text(_ value: String) { text += Self.escape(value) }

    /// Escaped for element content and for a double- or single-quoted attribute value.
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for character in Untrusted.display(value) {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// A query parameter's value, percent-encoded for a URL (then escaped for the attribute).
    static func queryValue(_ value: String) -> String {
        let allowed = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        )
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
