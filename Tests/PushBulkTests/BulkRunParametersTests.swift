import Foundation
import Testing

@testable import PushBulk

/// The parameters a run records in its header, and what continues it: exact values whatever
/// characters the paths and the alert hold, in the JSON a version-2 header wrote (under
/// `command`), with no secret in the file; a header of the first version still reads and is
/// still accepted. The command line's words for them are its own (checked end to end).
struct BulkRunParametersTests {
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
    ) -> BulkRunParameters {
        var payload = BulkRunPayload()
        payload.alert = alert
        var command = BulkRunParameters(credential: credential, tokens: tokens, payload: payload)
        command.passwordEnv = "MINT"
        command.environment = "sandbox"
        command.gateway = "127.0.0.1:2197"
        command.ca = ["gw/server-ca.pem"]
        return command
    }

    static func header(_ parameters: BulkRunParameters?) -> BulkRunHeader {
        BulkRunHeader(credential: "sha256:aa", template: template, gateway: "127.0.0.1:2197", parameters: parameters)
    }

    @Test func theParametersAreWrittenAsAVersionTwoHeaderWroteThem() throws {
        let header = Self.header(Self.command())
        #expect(header.version == 3)
        let line = header.jsonLine
        #expect(
            line.contains(
                #""command":{"ca":["gw/server-ca.pem"],"credential":"com.example.app-universal","environment":"sandbox","gateway":"127.0.0.1:2197","password_env":"MINT","payload":{"alert":"New release"},"tokens":"tokens.txt"}"#
            )
        )
        let continuation = try #require(
            header.continuation(resultsPath: "sent.jsonl", source: .file("tokens.txt"), credentialStopped: false)
        )
        #expect(continuation.parameters == Self.command())
        #expect(continuation.header == header)
        #expect(continuation.resultsPath == "sent.jsonl")
    }

    @Test func theParametersSurviveTheResultsFile() throws {
        var command = Self.command()
        command.store = "team store"
        command.teamID = "ABCDE12345"
        command.connections = 4
        command.allowDuplicates = true
        let header = Self.header(command)
        let read = try #require(BulkRunHeader.parse(Array(header.jsonLine.utf8)))
        #expect(read == header)
        #expect(read.parameters == command)
        #expect(read.parameters?.store == "team store" && read.parameters?.connections == 4)
        #expect(read.parameters?.allowDuplicates == true)
    }

    @Test func aVersionOneHeaderReadsHasNoCommandAndIsStillTheSameRun() throws {
        let line =
            #"{"run":{"collapse_id":"sale","credential":"sha256:aa","expiration":1900000000,"gateway":"127.0.0.1:2197","payload_sha256":"\#(Self.header(nil).payloadSHA256)","priority":10,"push_type":"alert","topic":"com.example.app","version":1}}"#
        let old = try #require(BulkRunHeader.parse(Array(line.utf8)))
        #expect(old.version == 1 && old.parameters == nil)
        #expect(old.continuation(resultsPath: "r.jsonl", source: .file("t"), credentialStopped: false) == nil)
        // The run that resumes it records its command; the comparison ignores it.
        #expect(old.differences(from: Self.header(Self.command())).isEmpty)
    }

    @Test func aResumeAcceptsAFileWithAVersionOneHeader() throws {
        let folder = BulkRunTests.Folder()
        let results = folder.file("r.jsonl")
        try (BulkRunTests.header().jsonLine + BulkRunTests.result(line: 1, token: BulkRunTests.token(1)).jsonLine)
            .write(toFile: results, atomically: true, encoding: .utf8)
        try Data().write(to: URL(fileURLWithPath: results + ".journal"))  // the unfinished run's journal
        #expect(BulkRunTests.header().version == 1)
        var current = BulkRunTests.header()
        current.version = 2
        current.parameters = Self.command()
        let run = try BulkRun.open(header: current, results: nil, resume: results)
        #expect(run.state?.finalCount == 1)
        #expect(!run.credentialChanged)
        run.release()
    }

    @Test func oddCharactersStayInTheirOwnWords() throws {
        let alert = "-50% today: \"it's\" $HOME `date` \\ ✓\nsecond line"
        let tokens = "my tokens/it's a \"list\" $(x).txt"
        let header = Self.header(Self.command(credential: "-odd name.p12", tokens: tokens, alert: alert))
        let read = try #require(BulkRunHeader.parse(Array(header.jsonLine.utf8)))
        #expect(read.parameters?.credential == "-odd name.p12")
        #expect(read.parameters?.payload.alert == alert)
        #expect(read.parameters?.tokens == tokens)
        #expect(!header.jsonLine.dropLast().contains("\n"), "the header stays one line")
    }

    @Test func standardInputAndTheCredentialToChangeAreSaid() throws {
        let fromPipe = Self.header(Self.command(tokens: "-"))
        let piped = try #require(
            fromPipe.continuation(
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
            Self.header(payloadCommand).continuation(
                resultsPath: "s.jsonl",
                source: .file("tokens.txt"),
                credentialStopped: false
            )
        )
        #expect(payload.standardInput == .pipe(producer: nil) && payload.standardInputIsPayload)
        #expect(payload.credentialToChange == nil)
        #expect(payload.parameters.payload.file == "-")
        let fromFile = try #require(
            Self.header(Self.command()).continuation(
                resultsPath: "s.jsonl",
                source: .file("tokens.txt"),
                credentialStopped: false
            )
        )
        #expect(fromFile.standardInput == nil)
    }

    @Test func noSecretIsRecorded() throws {
        var command = Self.command()
        command.proxy = BulkRunParameters.proxyWithoutPassword("http://ops:hunter2@proxy.example.com:3128")
        #expect(command.proxy == "http://ops@proxy.example.com:3128")
        #expect(
            BulkRunParameters.proxyWithoutPassword("http://proxy.example.com:3128") == "http://proxy.example.com:3128"
        )
        let line = Self.header(command).jsonLine
        #expect(!line.contains("hunter2"))
        #expect(line.contains(#""password_env":"MINT""#), "the password is named by where it is read from")
    }
}
