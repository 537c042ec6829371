import CLibCrypt
import Foundation

/// HTTP basic authentication against bcrypt hashes, as exporter-toolkit's `basic_auth_users`
/// takes them (`$2y$`, `$2b$`, `$2a$`), verified by the C library's `crypt_r` (libxcrypt).
/// Each check costs a bcrypt: call it off the event loops.
struct BasicAuth: Sendable {
    /// User name → bcrypt hash.
    let users: [String: String]

    static let bcryptPrefixes = ["$2y$", "$2b$", "$2a$"]

    /// Whether `hash` is a bcrypt hash the C library can verify.
    static func isUsableHash(_ hash: String) -> Bool {
        guard bcryptPrefixes.contains(where: hash.hasPrefix) else { return false }
        guard let computed = crypt("", setting: hash) else { return false }
        return computed.utf8.count == hash.utf8.count
    }

    /// Whether an `Authorization` header value names a user with the right password. An unknown
    /// user costs a bcrypt too, so that timing does not tell which users exist.
    func accepts(_ authorization: String?) -> Bool {
        guard let (user, password) = Self.credentials(authorization) else { return false }
        let known = users[user]
        guard let hash = known ?? users.values.min() else { return false }
        guard let computed = Self.crypt(password, setting: hash) else { return false }
        return Self.constantTimeEqual(computed, hash) && known != nil
    }

    /// The user and password of `Basic BASE64(user:password)`.
    static func credentials(_ authorization: String?) -> (String, String)? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// `crypt_r(password, setting)`, or nil when the C library refuses the setting.
    static func crypt(_ password: String, setting: String) -> String? {
        guard !password.utf8.contains(0) else { return nil }
        let data = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<crypt_data>.size,
            alignment: MemoryLayout<crypt_data>.alignment
        )
        defer {
            memset(data, 0, MemoryLayout<crypt_data>.size)
            data.deallocate()
        }
        memset(data, 0, MemoryLayout<crypt_data>.size)
        let state = data.bindMemory(to: crypt_data.self, capacity: 1)
        guard let result = crypt_r(password, setting, state) else { return nil }
        let text = String(cString: result)
        // libxcrypt answers a string starting with "*" when the setting is invalid.
        return text.hasPrefix("*") ? nil : text
    }

    /// Compares every byte whatever the first difference, so that the time taken does not say
    /// how much of a hash matched.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
