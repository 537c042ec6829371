import Foundation

extension TokenKeyFile {
    /// The PEM text of a token key's public half (`openssl pkey -in AuthKey_KEYID.p8 -pubout`),
    /// as a server that verifies provider tokens takes it. `namedBy` says in an error what
    /// named the file (a program's own option, say).
    public static func readPublicKeyPEM(path: String, namedBy: String? = nil) throws -> String {
        do {
            return String(decoding: try InputFile.read(path: path, kind: .publicKey), as: UTF8.self)
        } catch let error as CredentialError where error.code == .tooLarge {
            throw error
        } catch {
            throw CredentialError(
                .unreadable,
                path: path,
                "The public key\(namedBy.map { " named by \($0)" } ?? "") cannot be read.",
                hint: "Give the P-256 public key as PEM, e.g. `openssl pkey -in AuthKey_KEYID.p8 -pubout`."
            )
        }
    }
}
