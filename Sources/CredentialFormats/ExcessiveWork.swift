import Foundation

/// A PKCS#12 bundle or encrypted key that asks for more password-hashing work than any real
/// export does.
///
/// The iteration counts of a PKCS#12 MAC and of its password-based encryptions are written in
/// the file, and OpenSSL runs as many as it is told: a MAC count of 2³¹−1 keeps a process busy
/// for a quarter of an hour before it can even tell a wrong password. Exporters write about
/// 2,000 (Keychain Access, OpenSSL, Windows) and the most careful a few hundred thousand, so
/// counts are refused above ``maximumIterations`` each, and above ``maximumTotal`` together
/// (many safes of a lawful count each add up), before any of the work is done.
struct ExcessiveWork: Error {
    static let maximumIterations: UInt64 = 10_000_000
    static let maximumTotal: UInt64 = 30_000_000

    enum Part: Int32 {
        case mac = 0
        case certificates = 1
        case key = 2

        var words: String {
            switch self {
            case .mac: return "its integrity check (MAC)"
            case .certificates: return "the encryption of its certificates"
            case .key: return "the encryption of its private key"
            }
        }
    }

    var count: UInt64
    var part: Part
    var isTotal: Bool

    static func check(largest: UInt64, part: Part, total: UInt64) throws {
        if largest > maximumIterations { throw ExcessiveWork(count: largest, part: part, isTotal: false) }
        if total > maximumTotal { throw ExcessiveWork(count: total, part: part, isTotal: true) }
    }

    func error(path: String, what: String = "bundle") -> CredentialError {
        let count =
            self.count == .max ? "an unreadable number of" : self.count.formatted(.number.grouping(.automatic))
        let limit = (isTotal ? Self.maximumTotal : Self.maximumIterations).formatted(.number.grouping(.automatic))
        let asked =
            isTotal
            ? "asks for \(count) password-hashing iterations in all"
            : "asks for \(count) password-hashing iterations for \(part.words)"
        return CredentialError(
            .excessiveWork,
            path: path,
            "The \(what) \(asked); apnsctl refuses more than \(limit), as no exporting tool writes that many (they write about 2,000). The file is damaged or was made to stall whoever opens it; no password was tried.",
            hint: "Do not use this file: export the certificate and key again, or ask whoever sent it for a new export."
        )
    }
}

extension CredentialFile {
    /// Refuses an encrypted PKCS#8 key (EncryptedPrivateKeyInfo) whose iteration count is
    /// beyond any export's, before its password is asked for or tried.
    static func checkKeyWork(_ der: [UInt8], path: String) throws {
        let count = OpenSSL.pkcs8Iterations(der)
        do {
            try ExcessiveWork.check(largest: count, part: .key, total: count)
        } catch let work as ExcessiveWork {
            throw work.error(path: path, what: "private key")
        }
    }
}
