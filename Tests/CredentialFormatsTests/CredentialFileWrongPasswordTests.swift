import CredentialFormats
import Foundation
import TestSupport
import Testing

/// A wrong password for an encrypted private key is always reported as one.
///
/// Decrypting with a wrong key fails on the padding, except when the last block happens to
/// decrypt to valid padding (about one time in 256 for a traditional PEM key); the bytes then
/// fail to parse, and that parse error once read as "an algorithm OpenSSL cannot use". Each key
/// below is tried with several wrong passwords, so that the accident occurs many times over a run
/// (one key encrypted many times: each encryption has its own salt, so its own ciphertext).
struct CredentialFileWrongPasswordTests {
    static let copies = 200
    static let wrongPasswords = (1...6).map { "not-the-password-\($0)" }

    /// `copies` encryptions of one key by the openssl tool, each with its own password
    /// (`right-N`), in the shape `encrypt` writes: a shell command reading `key.pem` and the
    /// password from `$PW`, writing to `$OUT`.
    static func encryptedCopies(of kind: String, in folder: TemporaryFolder) throws -> [String] {
        let key: String
        let encrypt: String
        switch kind {
        case "PKCS#1":
            key = CLI.cert("identities/sandbox.key")
            encrypt = #"openssl rsa -in "$KEY" -aes256 -traditional -passout env:PW -out "$OUT""#
        case "EC":
            key = folder.path("ec.pem")
            let made = try CLI.runProgram(
                "openssl",
                ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key]
            )
            try #require(made.status == 0, "\(made.stderr)")
            encrypt = #"openssl ec -in "$KEY" -aes256 -passout env:PW -out "$OUT""#
        case "PKCS#8 DER":
            key = CLI.cert("identities/sandbox.key")
            encrypt = #"openssl pkcs8 -topk8 -in "$KEY" -v2 aes-256-cbc -passout env:PW -outform DER -out "$OUT""#
        default:
            key = CLI.cert("identities/sandbox.key")
            encrypt = #"openssl pkcs8 -topk8 -in "$KEY" -v2 aes-256-cbc -passout env:PW -out "$OUT""#
        }
        let script = """
            for i in $(seq 1 \(copies)); do
                PW="right-$i" OUT="$FOLDER/key-$i.pem" KEY="$KEY" sh -c '\(encrypt)' 2>/dev/null || exit 1
            done
            """
        let made = try CLI.runProgram(
            "bash",
            ["-c", script],
            environment: ["FOLDER": folder.url.path, "KEY": key],
            timeout: 300
        )
        try #require(made.status == 0, "\(made.stderr)")
        return (1...copies).map { folder.path("key-\($0).pem") }
    }

    @Test(arguments: ["PKCS#1", "EC", "PKCS#8", "PKCS#8 DER"])
    func aWrongPasswordIsAlwaysAWrongPassword(_ kind: String) throws {
        let folder = try TemporaryFolder()
        let paths = try Self.encryptedCopies(of: kind, in: folder)
        if kind != "PKCS#8 DER" {
            let header = kind == "PKCS#8" ? "-----BEGIN ENCRYPTED PRIVATE KEY-----" : "DEK-Info: AES-256-CBC"
            let first = try String(contentsOfFile: paths[0], encoding: .utf8)
            #expect(first.contains(header), "\(first)")
        }

        var misread: [String] = []
        for (index, path) in paths.enumerated() {
            for wrong in Self.wrongPasswords {
                do {
                    _ = try CredentialFile.readPrivateKey(path: path, password: .fixed(SecretBytes(wrong)))
                    misread.append("\(path) with \(wrong): decoded")
                } catch let error as CredentialError where error.code == .wrongPassword {
                    #expect(error.message.contains("Wrong password"), "\(error.message)")
                } catch {
                    misread.append("\(path) with \(wrong): \(error)")
                }
            }
            // The right password still opens it (every tenth copy: the wrong ones are the point).
            if index % 10 == 0 {
                let key = try CredentialFile.readPrivateKey(
                    path: path,
                    password: .fixed(SecretBytes("right-\(index + 1)"))
                )
                #expect(!key.isEmpty)
            }
        }
        #expect(misread.isEmpty, "\(misread.count) of \(paths.count * Self.wrongPasswords.count): \(misread.prefix(5))")
    }

    /// A PKCS#12 bundle without a MAC can only be checked by decrypting it, first with the empty
    /// password: the same accident there (about one bundle in 200 with an encrypted certificate
    /// safe) once made a bundle read as damaged, whatever password was given.
    @Test func aBundleWithoutMACIsReadWithItsPasswordAndRefusedWithAnother() throws {
        let folder = try TemporaryFolder()
        let script = """
            for i in $(seq 1 \(Self.copies)); do
                PW="right-$i" openssl pkcs12 -export -in "$CERT" -inkey "$KEY" -nomac -certpbe AES-256-CBC \\
                    -keypbe AES-256-CBC -passout env:PW -out "$FOLDER/bundle-$i.p12" 2>/dev/null || exit 1
            done
            """
        let made = try CLI.runProgram(
            "bash",
            ["-c", script],
            environment: [
                "FOLDER": folder.url.path, "CERT": CLI.cert("identities/sandbox.pem"),
                "KEY": CLI.cert("identities/sandbox.key"),
            ],
            timeout: 300
        )
        try #require(made.status == 0, "\(made.stderr)")
        var misread: [String] = []
        for index in 1...Self.copies {
            let path = folder.path("bundle-\(index).p12")
            do {
                let file = try CredentialFile.read(path: path, password: .fixed(SecretBytes("right-\(index)")))
                #expect(file.protection?.mac == "none")
                #expect(file.privateKeyPKCS8 != nil)
            } catch {
                misread.append("\(path) with its password: \(error)")
            }
            for wrong in Self.wrongPasswords.prefix(3) {
                do {
                    _ = try CredentialFile.read(path: path, password: .fixed(SecretBytes(wrong)))
                    misread.append("\(path) with \(wrong): decoded")
                } catch let error as CredentialError where error.code == .wrongPassword {
                    #expect(error.message.contains("no integrity check (MAC)"), "\(error.message)")
                } catch {
                    misread.append("\(path) with \(wrong): \(error)")
                }
            }
        }
        #expect(misread.isEmpty, "\(misread.count) misread: \(misread.prefix(5))")
    }

    /// The accident itself, found with the openssl tool as the judge: bundles are written until
    /// one whose empty-password try ends without "bad decrypt" (one in about 200), and that one
    /// opens with its password and refuses another as a wrong password.
    @Test func aBundleWhoseEmptyPasswordTryLeavesValidPaddingIsRead() throws {
        let folder = try TemporaryFolder()
        let script = """
            for i in $(seq 1 3000); do
                openssl pkcs12 -export -in "$CERT" -inkey "$KEY" -iter 1 -nomac -certpbe AES-256-CBC \\
                    -keypbe AES-256-CBC -passout env:PW -out "$FOLDER/bundle.p12" 2>/dev/null || exit 2
                openssl pkcs12 -in "$FOLDER/bundle.p12" -passin pass: -noout 2>&1 | grep -q "bad decrypt" || exit 0
            done
            exit 1
            """
        let made = try CLI.runProgram(
            "bash",
            ["-c", script],
            environment: [
                "FOLDER": folder.url.path, "CERT": CLI.cert("identities/sandbox.pem"),
                "KEY": CLI.cert("identities/sandbox.key"), "PW": "right-1",
            ],
            timeout: 600
        )
        try #require(made.status == 0, "no such bundle was written: \(made.stdout)\(made.stderr)")
        let path = folder.path("bundle.p12")
        let file = try CredentialFile.read(path: path, password: .fixed(SecretBytes("right-1")))
        // -iter sets the MAC's count too, so -nomac comes after it.
        #expect(file.protection?.mac == "none")
        #expect(file.privateKeyPKCS8 != nil)
        #expect(file.certificate.bundleID == "com.example.app")
        #expect(throws: CredentialError.self) {
            do {
                _ = try CredentialFile.read(path: path, password: .fixed(SecretBytes("not-the-password")))
            } catch let error as CredentialError {
                #expect(error.code == .wrongPassword, "\(error)")
                throw error
            }
        }
    }

    /// An encryption OpenSSL cannot run is still told apart from a wrong password.
    @Test func anUnknownCipherIsNotAWrongPassword() throws {
        let folder = try TemporaryFolder()
        let source = folder.path("key.pem")
        let made = try CLI.runProgram(
            "openssl",
            [
                "rsa", "-in", CLI.cert("identities/sandbox.key"), "-aes256", "-traditional", "-passout", "env:PW",
                "-out", source,
            ],
            environment: ["PW": "right-1"]
        )
        try #require(made.status == 0, "\(made.stderr)")
        let text = try String(contentsOfFile: source, encoding: .utf8)
        let renamed = folder.path("renamed.pem")
        try text.replacingOccurrences(of: "DEK-Info: AES-256-CBC", with: "DEK-Info: NOT-A-CIPHER-CBC")
            .write(toFile: renamed, atomically: true, encoding: .utf8)
        #expect(throws: CredentialError.self) {
            do {
                _ = try CredentialFile.readPrivateKey(path: renamed, password: .fixed(SecretBytes("right-1")))
            } catch let error as CredentialError {
                #expect(error.code == .unknownEncryption, "\(error)")
                throw error
            }
        }
    }
}
