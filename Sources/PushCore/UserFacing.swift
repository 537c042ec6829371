import Foundation

/// Turns another library's error into words for a person: no source locations, type names,
/// enum cases or byte dumps, which say nothing to a user and may say too much.
public enum UserFacing {
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let error as PushCoreError:
            return error.message
        case let error as DecodingError:
            return describe(decoding: error)
        default:
            break
        }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain, let message = strerrorText(Int32(bridged.code)) { return message }
        return sanitize(String(describing: error))
    }

    /// The same for text that came from another library.
    public static func sanitize(_ text: String) -> String {
        // OpenSSL and BoringSSL put their reason in a code such as CERTIFICATE_VERIFY_FAILED or
        // SSLV3_ALERT_BAD_CERTIFICATE: the words are the message.
        let reasons = text.matches(of: /[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+/).map { String($0.output) }
            .filter { !$0.hasPrefix("OPENSSL") }
        if !reasons.isEmpty {
            var seen: [String] = []
            for reason in reasons where !seen.contains(reason) { seen.append(reason) }
            return seen.map { $0.lowercased().replacingOccurrences(of: "_", with: " ") }.joined(separator: "; ")
        }
        var cleaned = text
        cleaned.replace(/[A-Za-z0-9_\-\/]*\.swift:\d+(?::\d+)?/, with: "")
        cleaned.replace(/\[(?:0x)?[0-9A-Fa-f]{1,3}(?:, (?:0x)?[0-9A-Fa-f]{1,3}){7,}\]/, with: "(bytes)")
        cleaned.replace(/Optional\(([^()]*)\)/) { String($0.output.1) }
        // A type name and its case ("ASN1Error.invalidASN1Object:"), or a type name alone.
        cleaned.replace(/[A-Z][A-Za-z0-9]*Errors?\.[a-z][A-Za-z0-9]*:?/, with: "")
        cleaned.replace(/[A-Z][A-Za-z0-9]*Errors?/, with: "")
        cleaned.replace(/\s{2,}/, with: " ")
        cleaned = cleaned.trimmingCharacters(in: CharacterSet(charactersIn: " .:()"))
        if cleaned.count > 200 { cleaned = String(cleaned.prefix(200)) + "…" }
        return cleaned.isEmpty ? "an unexpected failure" : cleaned
    }

    private static func describe(decoding error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "it is not valid JSON" : "a value\(path(context)) is not valid"
        case .keyNotFound(let key, let context):
            return "\"\(key.stringValue)\" is missing\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "a value\(path(context)) has the wrong type"
        @unknown default:
            return "it does not have the expected shape"
        }
    }

    private static func strerrorText(_ code: Int32) -> String? {
        guard let text = strerror(code) else { return nil }
        return String(cString: text).lowercased()
    }
}
