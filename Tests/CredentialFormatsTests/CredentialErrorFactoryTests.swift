import CredentialFormats
import Foundation
import PushCore
import Testing

/// The factories of ``CredentialError``: what each keeps (code, subject, hint, remedy) reaches the
/// JSON shape unchanged, and where it was made is recorded but never compared or reported.
struct CredentialErrorFactoryTests {
    /// The keys and values of an error's JSON shape.
    static func json(_ error: some ReportableError) throws -> [String: String] {
        let data = try JSONEncoder().encode(error.reported)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
    }

    @Test func aFileFactoryKeepsCodePathAndHint() throws {
        let line: UInt = #line + 1
        let error = CredentialError.fileNotFound(path: "missing.p12")
        #expect(error.code == .fileNotFound)
        #expect(error.subject == .file("missing.p12"))
        #expect(error.file == #fileID)
        #expect(error.line == line)
        #expect(
            try Self.json(error) == [
                "code": "file_not_found", "message": "missing.p12: No such file.",
                "hint": "Check the path; relative paths are taken from the current folder.",
            ]
        )
        #expect(error.debugDescription.hasSuffix("(\(#fileID):\(line))"))
        #expect(!error.description.contains(#fileID))
    }

    @Test func theWordedFactoriesKeepTheirWords() throws {
        let error = CredentialError(.wrongPassword, path: "push.p12", "Wrong password.", hint: "Check it.")
        #expect(error.code == .wrongPassword)
        #expect(
            try Self.json(error) == [
                "code": "wrong_password", "message": "push.p12: Wrong password.", "hint": "Check it.",
            ]
        )
        let unreadable = InputFile.unreadable(path: "a.pem", errno: EACCES)
        #expect(unreadable.message == "The file cannot be read (Permission denied).")
        #expect(unreadable.subject == .file("a.pem"))
    }

    @Test func anAliasFactoryKeepsTheAliasAndTheRemedy() throws {
        let error = CredentialError.aliasNotFound(
            "prod",
            "No credential named prod.",
            hint: "Import it.",
            remedy: .credentialStored(file: nil)
        )
        #expect(error.code == .aliasNotFound)
        #expect(error.alias == "prod")
        #expect(error.subject == .credential("prod"))
        #expect(error.remedy == .credentialStored(file: nil))
        #expect(error.failure == .couldNotCheck)
        // An alias is not a file: the message is not prefixed with it.
        #expect(
            try Self.json(error) == [
                "code": "alias_not_found", "message": "No credential named prod.", "hint": "Import it.",
            ]
        )
        let none = CredentialError.aliasNotFound(nil, "There is no credential to check.")
        #expect(none.subject == nil)
        #expect(try Self.json(none) == ["code": "alias_not_found", "message": "There is no credential to check."])
    }

    @Test func aStoreFactoryKeepsAliasAndFailureKind() throws {
        let taken = CredentialError(.aliasTaken, "The alias prod is taken.", alias: "prod")
        #expect(taken.code == .aliasTaken)
        #expect(taken.subject == .credential("prod"))
        #expect(taken.failure == .problem)
        let missing = CredentialError(
            .secretNotFound,
            path: "store/credentials/prod.pem",
            "The key is missing.",
            alias: "prod"
        )
        // A file and an alias: the file is the subject, the alias stays for a front end's advice.
        #expect(missing.subject == .file("store/credentials/prod.pem"))
        #expect(missing.alias == "prod")
        let unexportable = CredentialError(.notExportable, "A token key has no certificate.", alias: "key")
        #expect(unexportable.code == .notExportable)
        #expect(unexportable.subject == .credential("key"))
    }

    @Test func equalityIgnoresWhereAndWordsButNotTheSubject() {
        let here = CredentialError(.corrupt, path: "a.p12", "Damaged.")
        let there = CredentialError(
            .corrupt,
            path: "a.p12",
            "Damaged in other words.",
            file: "Elsewhere/File.swift",
            line: 1
        )
        #expect(here.line != there.line)
        #expect(here == there)
        #expect(here != CredentialError(.corrupt, path: "b.p12", "Damaged."))
        #expect(here != CredentialError(.truncated, path: "a.p12", "Damaged."))
    }

    @Test func anotherHintKeepsEverythingElse() {
        let line: UInt = #line + 1
        let error = CredentialError(
            .passwordRequired,
            path: "a.p12",
            "Needs a password.",
            alias: "prod",
            remedy: .teamSynced
        )
        .withHint("Give it on standard input.")
        #expect(error.hint == "Give it on standard input.")
        #expect(error.code == .passwordRequired)
        #expect(error.path == "a.p12")
        #expect(error.alias == "prod")
        #expect(error.remedy == .teamSynced)
        #expect(error.file == #fileID)
        #expect(error.line == line)
    }
}
