import Foundation
import Testing

@testable import PushBulk

/// The command a run records in its header, and the resume command built from it: exact words
/// (never a string to split again), whatever characters the paths and the alert hold, with no
/// secret in the file; a header of the first version still reads and is still accepted.
struct BulkRunCommandTests {
    static let template = NotificationTemplate(
        topic: "com.example.app",
        pushType: .alert,
        priority: PushPriority(10),
        expiration: Date(timeIntervalSince1970: 1_900_000_000),
        collapseID: "sale",
        payload: Array(#"{"aps":{"alert":"x"}}"#.utf8)
    )

    static func command(
        credential: String = "com.example.app-universal",
        tokens: String = "tokens.txt",
        alert: String = "New release"
    ) -> BulkRunCommand {
        var payload = BulkRunPayload()
        payload.alert = alert
        var command = BulkRunCommand(credential: credential, tokens: tokens, payload: payload)
        command.passwordEnv = "MINT"
        command.environment = "sandbox"
        command.gateway = "127.0.0.1:2197"
        command.ca = ["gw/server-ca.pem"]
        return command
    }

    static func header(_ command: BulkRunCommand?) -> BulkRunHeader {
        BulkRunHeader(credential: "sha256:aa", template: template, gateway: "127.0.0.1:2197", command: command)
    }

    @Test func theArgumentsRepeatTheRecordedRunWithTheResultsGivenToResume() throws {
        let header = Self.header(Self.command())
        #expect(header.version == 3)
        let arguments = try #require(header.resumeArguments(resultsPath: "sent.jsonl"))
        #expect(
            arguments == [
                "send", "com.example.app-universal", "--password-env", "MINT", "--tokens", "tokens.txt",
                "--alert", "New release", "--topic", "com.example.app", "--push-type", "alert", "--priority", "10",
                "--expiration", "1900000000", "--collapse-id", "sale", "--environment", "sandbox",
                "--gateway", "127.0.0.1:2197", "--ca", "gw/server-ca.pem", "--resume", "sent.jsonl",
            ]
        )
    }

    @Test func theCommandSurvivesTheResultsFile() throws {
        var command = Self.command()
        command.store = "team store"
        command.teamID = "ABCDE12345"
        command.connections = 4
        command.allowDuplicates = true
        let header = Self.header(command)
        let read = try #require(BulkRunHeader.parse(Array(header.jsonLine.utf8)))
        #expect(read == header)
        #expect(read.command == command)
        let arguments = try #require(read.resumeArguments(resultsPath: "r.jsonl"))
        #expect(arguments.contains("--allow-duplicates"))
        #expect(arguments.firstIndex(of: "--store").map { arguments[$0 + 1] } == "team store")
        #expect(arguments.firstIndex(of: "--connections").map { arguments[$0 + 1] } == "4")
    }

    @Test func aVersionOneHeaderReadsHasNoCommandAndIsStillTheSameRun() throws {
        let line =
            #"{"run":{"collapse_id":"sale","credential":"sha256:aa","expiration":1900000000,"gateway":"127.0.0.1:2197","payload_sha256":"\#(Self.header(nil).payloadSHA256)","priority":10,"push_type":"alert","topic":"com.example.app","version":1}}"#
        let old = try #require(BulkRunHeader.parse(Array(line.utf8)))
        #expect(old.version == 1 && old.command == nil)
        #expect(old.resumeArguments(resultsPath: "r.jsonl") == nil)
        #expect(old.resumeCommand(resultsPath: "r.jsonl", source: .file("t"), credentialStopped: false) == nil)
        // The run that resumes it records its command; the comparison ignores it.
        #expect(old.differences(from: Self.header(Self.command())).isEmpty)
    }

    @Test func aResumeAcceptsAFileWithAVersionOneHeader() throws {
        let folder = BulkRunTests.Folder()
        let results = folder.file("r.jsonl")
        try (BulkRunTests.header().jsonLine + BulkRunTests.result(line: 1, token: BulkRunTests.token(1)).jsonLine)
            .write(toFile: results, atomically: true, encoding: .utf8)
        #expect(BulkRunTests.header().version == 1)
        var current = BulkRunTests.header()
        current.version = 2
        current.command = Self.command()
        let run = try BulkRun.open(header: current, results: nil, resume: results)
        #expect(run.state?.finalCount == 1)
        #expect(!run.credentialChanged)
        run.release()
    }

    @Test func oddCharactersStayInTheirOwnWords() throws {
        let alert = "-50% today: \"it's\" $HOME `date` \\ ✓\nsecond line"
        let tokens = "my tokens/it's a \"list\" $(x).txt"
        let header = Self.header(Self.command(credential: "-odd name.p12", tokens: tokens, alert: alert))
        let results = "out put/résumé's.jsonl"
        let arguments = try #require(header.resumeArguments(resultsPath: results))
        #expect(arguments[1] == "./-odd name.p12", "a path that starts with - would read as an option")
        #expect(arguments.contains("--alert=" + alert), "a value that starts with - is joined to its option")
        #expect(arguments.firstIndex(of: "--tokens").map { arguments[$0 + 1] } == tokens)
        #expect(Array(arguments.suffix(2)) == ["--resume", results])
        let read = try #require(BulkRunHeader.parse(Array(header.jsonLine.utf8)))
        #expect(read.resumeArguments(resultsPath: results) == arguments)
        #expect(!header.jsonLine.dropLast().contains("\n"), "the header stays one line")
    }

    @Test func standardInputAndTheCredentialToChangeAreSaid() throws {
        let fromPipe = Self.header(Self.command(tokens: "-"))
        let piped = try #require(
            fromPipe.resumeCommand(
                resultsPath: "s.jsonl",
                source: .pipe(producer: ["cat", "tokens.txt"]),
                credentialStopped: true
            )
        )
        #expect(piped.standardInput == .pipe(producer: ["cat", "tokens.txt"]) && !piped.standardInputIsPayload)
        #expect(piped.credentialToChange == "com.example.app-universal")
        var payloadCommand = Self.command()
        payloadCommand.payload = BulkRunPayload()
        payloadCommand.payload.file = "-"
        let payload = try #require(
            Self.header(payloadCommand).resumeCommand(
                resultsPath: "s.jsonl",
                source: .file("tokens.txt"),
                credentialStopped: false
            )
        )
        #expect(payload.standardInput == .pipe(producer: nil) && payload.standardInputIsPayload)
        #expect(payload.credentialToChange == nil)
        #expect(payload.arguments.contains("--payload") && payload.arguments.contains("-"))
        let fromFile = try #require(
            Self.header(Self.command()).resumeCommand(
                resultsPath: "s.jsonl",
                source: .file("tokens.txt"),
                credentialStopped: false
            )
        )
        #expect(fromFile.standardInput == nil)
    }

    @Test func noSecretIsRecorded() throws {
        var command = Self.command()
        command.proxy = BulkRunCommand.proxyWithoutPassword("http://ops:hunter2@proxy.example.com:3128")
        #expect(command.proxy == "http://ops@proxy.example.com:3128")
        #expect(BulkRunCommand.proxyWithoutPassword("http://proxy.example.com:3128") == "http://proxy.example.com:3128")
        let line = Self.header(command).jsonLine
        #expect(!line.contains("hunter2"))
        #expect(line.contains(#""password_env":"MINT""#), "the password is named by where it is read from")
    }
}
