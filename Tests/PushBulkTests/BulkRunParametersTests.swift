import Foundation
import Testing

@testable import PushBulk

/// The parameters a run records in its header, and what continues it: exact values whatever
/// characters the paths and the alert hold, by name under `command`; a header of version 3
/// reads into the same form, and one of the first version still reads and is still accepted.
/// The command line's names and words for them are its own (checked in its tests).
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
        var command = BulkRunParameters(
            credential: credential,
            options: [
                "alert": [alert], "password-env": ["MINT"], "environment": ["sandbox"], "gateway": ["127.0.0.1:2197"],
                "ca": ["gw/server-ca.pem"],
            ],
            standardInput: tokens == "-" ? .tokens : nil
        )
        command.tokens = tokens
        return command
    }

    static func header(_ parameters: BulkRunParameters?) -> BulkRunHeader {
        BulkRunHeader(credential: "sha256:aa", template: template, gateway: "127.0.0.1:2197", parameters: parameters)
    }

    @Test func theParametersAreWrittenByName() throws {
        let header = Self.header(Self.command())
        #expect(header.version == 5)
        let line = header.jsonLine
        #expect(
            line.contains(
                #""command":{"credential":"com.example.app-universal","options":{"alert":["New release"],"ca":["gw/server-ca.pem"],"environment":["sandbox"],"gateway":["127.0.0.1:2197"],"password-env":["MINT"]},"tokens":"tokens.txt"}"#
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
        command.options["store"] = ["team store"]
        command.options["ca"] = ["a.pem", "b.pem"]
        command.options["allow-duplicates"] = []
        command.connections = 4
        let header = Self.header(command)
        let read = try #require(BulkRunHeader.parse(Array(header.jsonLine.utf8)))
        #expect(read == header)
        #expect(read.parameters == command)
        #expect(read.parameters?.options["ca"] == ["a.pem", "b.pem"] && read.parameters?.connections == 4)
        #expect(read.parameters?.options["allow-duplicates"] == [])
    }

    /// A results file a version-3 header starts (its `command` a fixed set of values, the
    /// payload's grouped) still resumes: its values read as the options they were given as.
    @Test func aVersionThreeHeaderReadsAsTheOptionsItRecorded() throws {
        let line =
            #"{"run":{"collapse_id":null,"command":{"allow_duplicates":true,"ca":["a.pem","b.pem"],"connections":4,"credential":"app.p12","environment":"production","max_attempts":3,"password_env":"MINT","payload":{"file":"-","event":"update","event_options":{"content-state":"{}","input-push-token":""}},"results":"sent.jsonl","timeout":2.5,"tokens":"tokens.txt","quiet":true},"credential":"sha256:aa","expiration":null,"gateway":"127.0.0.1:2197","payload_sha256":"9f86","priority":null,"push_type":"liveactivity","topic":"com.example.app","version":3}}"#
        let read = try #require(BulkRunHeader.parse(Array(line.utf8)))
        #expect(read.version == 3)
        let parameters = try #require(read.parameters)
        #expect(parameters.credential == "app.p12")
        #expect(
            parameters.options == [
                "allow-duplicates": [], "ca": ["a.pem", "b.pem"], "environment": ["production"],
                "max-attempts": ["3"], "password-env": ["MINT"], "payload": ["-"], "event": ["update"],
                "content-state": ["{}"], "input-push-token": [], "timeout": ["2.5"], "quiet": [],
            ]
        )
        #expect(parameters.connections == 4 && parameters.tokens == "tokens.txt")
        #expect(parameters.standardInput == .payload)
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

    /// The results file of a run of the previous version, its `command` as that version wrote it,
    /// still resumes; a missing journal is bounded by the connections it recorded.
    @Test func aResumeAcceptsAFileWithAVersionThreeHeader() throws {
        let folder = BulkRunTests.Folder()
        let results = folder.file("r.jsonl")
        let line =
            #"{"run":{"collapse_id":null,"command":{"connections":3,"credential":"app.p12","environment":"sandbox","payload":{"alert":"x"},"results":"r.jsonl","tokens":"t.txt"},"credential":"sha256:aa","expiration":null,"gateway":"127.0.0.1:2197","payload_sha256":"9f86","priority":null,"push_type":"alert","topic":"com.example.app","tokens_fingerprint":"1:ab","version":3}}"#
        try (line + "\n" + BulkRunTests.result(line: 1, token: BulkRunTests.token(1)).jsonLine)
            .write(toFile: results, atomically: true, encoding: .utf8)
        var current = BulkRunTests.header()
        current.version = 4
        current.parameters = Self.command()
        let error = #expect(throws: BulkRunError.self, "a resume without its journal was accepted") {
            try BulkRun.open(header: current, results: nil, resume: results)
        }
        let bound = 3 * BulkEngine.Configuration().maxInFlightPerConnection
        #expect(error?.message.contains("up to \(bound) ") == true, "\(error?.message ?? "")")
        try Data().write(to: URL(fileURLWithPath: results + ".journal"))  // the unfinished run's journal
        let run = try BulkRun.open(header: current, results: nil, resume: results)
        #expect(run.state?.finalCount == 1)
        #expect(run.state?.header?.parameters?.options["alert"] == ["x"])
        run.release()
    }

    @Test func oddCharactersStayInTheirOwnWords() throws {
        let alert = "-50% today: \"it's\" $HOME `date` \\ ✓\nsecond line"
        let tokens = "my tokens/it's a \"list\" $(x).txt"
        let header = Self.header(Self.command(credential: "-odd name.p12", tokens: tokens, alert: alert))
        let read = try #require(BulkRunHeader.parse(Array(header.jsonLine.utf8)))
        #expect(read.parameters?.credential == "-odd name.p12")
        #expect(read.parameters?.options["alert"] == [alert])
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
        payloadCommand.options["alert"] = nil
        payloadCommand.options["payload"] = ["-"]
        payloadCommand.standardInput = .payload
        let payload = try #require(
            Self.header(payloadCommand).continuation(
                resultsPath: "s.jsonl",
                source: .file("tokens.txt"),
                credentialStopped: false
            )
        )
        #expect(payload.standardInput == .pipe(producer: nil) && payload.standardInputIsPayload)
        #expect(payload.credentialToChange == nil)
        #expect(payload.parameters.options["payload"] == ["-"])
        let fromFile = try #require(
            Self.header(Self.command()).continuation(
                resultsPath: "s.jsonl",
                source: .file("tokens.txt"),
                credentialStopped: false
            )
        )
        #expect(fromFile.standardInput == nil)
    }
}
