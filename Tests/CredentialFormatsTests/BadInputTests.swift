import CredentialFormats
import Foundation
import TestSupport
import Testing

/// Each kind of bad input fails with its own error code, and the password is asked for only
/// when the file needs one.
struct BadInputTests {
    static func error(reading path: String, password: String? = nil) -> CredentialError? {
        do {
            _ = try CredentialFile.read(path: path, password: password.map { .fixed(SecretBytes($0)) } ?? .none)
            return nil
        } catch let error as CredentialError {
            return error
        } catch {
            Issue.record("unexpected error type \(type(of: error)): \(error)")
            return nil
        }
    }

    @Test(
        arguments: [
            ("p12/keychain-legacy.p12", "wrong", CredentialError.Code.wrongPassword),
            ("p12/openssl3-default.p12", "wrong", .wrongPassword),
            ("p12/no-mac.p12", "wrong", .wrongPassword),
            ("pem/encrypted-key-bundle.pem", "wrong", .wrongPassword),
            ("p12/truncated.p12", "apnsctl-test", .truncated),
            ("p12/unknown-encryption.p12", "apnsctl-test", .unknownEncryption),
            ("pem/key-only.pem", nil, .noCertificate),
            ("bad/empty.p12", nil, .emptyFile),
            ("bad/photo.jpg", nil, .notACertificate),
            ("bad/notes.txt", nil, .notACertificate),
            ("bad/garbage.pem", nil, .corrupt),
            ("p12/openssl3-default.p12", nil, .passwordRequired),
            ("pem/encrypted-key-bundle.pem", nil, .passwordRequired),
        ] as [(String, String?, CredentialError.Code)]
    )
    func failsWithItsOwnCode(_ path: String, _ password: String?, _ code: CredentialError.Code) throws {
        let error = try #require(Self.error(reading: TestPaths.cert(path), password: password))
        #expect(error.code == code)
        #expect(error.path == TestPaths.cert(path))
        #expect(error.hint?.isEmpty == false)
        if let password { #expect(!error.description.contains(password)) }
    }

    /// The manifest's expected error for every bad fixture is the code apnsctl gives.
    @Test(arguments: Manifest.shared.files.filter { $0.expectedError != nil })
    func manifestErrorsMatch(_ entry: Manifest.Entry) throws {
        let error = try #require(
            Self.error(reading: TestPaths.cert(entry.path), password: entry.password ?? Manifest.shared.password)
        )
        #expect(error.code.name == entry.expectedError)
    }

    @Test func missingFileAndDirectory() throws {
        #expect(Self.error(reading: TestPaths.cert("no-such-file.p12"))?.code == .fileNotFound)
        #expect(Self.error(reading: TestPaths.certs.path)?.code == .isDirectory)
    }

    @Test func corruptedMiddleIsNotCalledAWrongPassword() throws {
        // Flip bytes in the middle of a bundle: the structure no longer decodes, which must
        // not be blamed on the password.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: TestPaths.cert("p12/openssl3-default.p12"))))
        for index in 4..<40 { bytes[index] ^= 0x5A }
        let error = try #require(
            Result { try CredentialFile.decode(bytes, path: "x.p12", password: .fixed(SecretBytes("apnsctl-test"))) }
                .failure
        )
        #expect([CredentialError.Code.corrupt, .truncated].contains(error.code))
    }

    /// An encrypted-data safe without its optional content (the shape of CVE-2024-0727) is a
    /// damaged file, not a crash.
    @Test func encryptedSafeWithoutContentIsCorrupt() throws {
        let hex = "3023020103301e06092a864886f70d010701a011040f300d300b06092a864886f70d010706"
        let bytes = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
        let error = try #require(Result { try CredentialFile.decode(bytes, path: "x.p12", password: .none) }.failure)
        #expect(error.code == .corrupt)
    }

    @Test func interactiveSourcesGetASecondChance() throws {
        let answers = AnswerQueue(["wrong", "apnsctl-test"])
        let source = PasswordSource(isInteractive: true) { _ in answers.next() }
        let file = try CredentialFile.read(path: TestPaths.cert("p12/keychain-legacy.p12"), password: source)
        #expect(file.privateKey?.matchesCertificate == true)
        #expect(answers.remaining == 0)
    }
}

final class AnswerQueue: @unchecked Sendable {
    private var answers: [String]
    private let lock = NSLock()
    init(_ answers: [String]) { self.answers = answers }
    func next() -> SecretBytes? {
        lock.lock()
        defer { lock.unlock() }
        return answers.isEmpty ? nil : SecretBytes(answers.removeFirst())
    }
    var remaining: Int {
        lock.lock()
        defer { lock.unlock() }
        return answers.count
    }
}

extension Result where Failure == any Error {
    var failure: CredentialError? {
        if case .failure(let error) = self { return error as? CredentialError }
        return nil
    }
}
