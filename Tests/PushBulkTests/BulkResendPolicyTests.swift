import Foundation
import PushCore
import Testing

@testable import PushBulk

/// What is sent again after a lost answer, by push type and by the run's recorded choice, and
/// the collapse ID that makes a second delivery replace the first.
struct BulkResendPolicyTests {
    static func template(_ pushType: PushType, collapseID: String? = nil) -> NotificationTemplate {
        NotificationTemplate(
            topic: "com.example.app",
            pushType: pushType,
            collapseID: collapseID,
            payload: Array(#"{"aps":{"alert":"x"}}"#.utf8)
        )
    }

    static func header(_ pushType: PushType, resend: Bool? = nil) -> BulkRunHeader {
        var header = BulkRunHeader(credential: "sha256:aa", template: template(pushType), gateway: "127.0.0.1:2197")
        header.resendUncertain = resend
        return header
    }

    @Test func pushTypesThatActTwiceAreNotResentByDefaultAndOnlyAlertsGetACollapseID() {
        for type in [PushType.voip, .pushtotalk, .location, .background, PushType("newkind")] {
            #expect(!BulkDelivery.resendsUncertainByDefault(type), "\(type)")
            #expect(!BulkDelivery.derivesCollapseID(for: Self.template(type)), "\(type)")
        }
        for type in [PushType.alert, .complication, .fileprovider, .mdm, .liveactivity, .widgets, .controls] {
            #expect(BulkDelivery.resendsUncertainByDefault(type), "\(type)")
        }
        #expect(BulkDelivery.derivesCollapseID(for: Self.template(.alert)))
        #expect(!BulkDelivery.derivesCollapseID(for: Self.template(.alert, collapseID: "sale")), "the user's wins")
        #expect(!BulkDelivery.derivesCollapseID(for: Self.template(.liveactivity)))
        let id = "5f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
        #expect(BulkDelivery.collapseID(apnsID: id) == id)
        #expect(BulkDelivery.collapseID(apnsID: id).utf8.count <= 64)
    }

    @Test func theRequestCarriesTheCollapseIDInItsPlaceUnlessTheTemplateHasOne() {
        let id = "5f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
        func headers(_ template: NotificationTemplate) -> [(String, String, Bool)] {
            var list: [(String, String, Bool)] = []
            RequestEncoder(template: template, authority: "localhost").forEachHeader(
                deviceHex: "ab",
                apnsID: id,
                collapseID: id,
                authorization: nil
            ) { list.append(($0, $1, $2)) }
            return list
        }
        let derived = headers(Self.template(.alert))
        let names = derived.map(\.0)
        #expect(names.filter { $0 == "apns-collapse-id" }.count == 1)
        #expect(names.firstIndex(of: "apns-collapse-id")! + 1 == names.firstIndex(of: "content-length"))
        #expect(derived.first { $0.0 == "apns-collapse-id" }.map { $0.1 == id && !$0.2 } == true, "not indexed")
        let given = headers(Self.template(.alert, collapseID: "sale"))
        #expect(given.filter { $0.0 == "apns-collapse-id" }.map(\.1) == ["sale"])
    }

    @Test func aNewRunRecordsItsPolicyAndAResumeKeepsItUnlessToldOtherwise() throws {
        let folder = BulkRunTests.Folder()
        for (type, expected) in [(PushType.alert, true), (.voip, false)] {
            let path = folder.file("\(type).jsonl")
            let run = try BulkRun.open(header: Self.header(type), results: path, resume: nil)
            #expect(run.header.resendUncertain == expected)
            _ = run.conclude(BulkSummary(), tokensRead: 0)
            let recorded = try String(contentsOfFile: path, encoding: .utf8)
            #expect(recorded.contains(#""resend_uncertain":\#(expected)"#), "\(recorded)")
            #expect(recorded.contains(#""version":5"#))
            try Data().write(to: URL(fileURLWithPath: path + ".journal"))
            let kept = try BulkRun.open(header: Self.header(type), results: nil, resume: path)
            #expect(kept.header.resendUncertain == expected, "the resume keeps the run's policy")
            kept.release()
            let told = try BulkRun.open(header: Self.header(type, resend: !expected), results: nil, resume: path)
            #expect(told.header.resendUncertain == !expected, "a resume told otherwise goes by what it is told")
            told.release()
        }
        let atMostOnce = folder.file("once.jsonl")
        let run = try BulkRun.open(header: Self.header(.alert, resend: false), results: atMostOnce, resume: nil)
        #expect(run.header.resendUncertain == false)
        run.release()
    }

    /// A run recorded before the policy existed sent without collapse IDs of its own: its resume
    /// has no recorded policy, so what it had in flight is not sent again unless asked.
    @Test func aResumeOfARunRecordedBeforeThePolicyHasNone() throws {
        let folder = BulkRunTests.Folder()
        let results = folder.file("old.jsonl")
        let line =
            #"{"run":{"credential":"sha256:aa","gateway":"127.0.0.1:2197","payload_sha256":"\#(Self.header(.alert).payloadSHA256)","push_type":"alert","topic":"com.example.app","version":4}}"#
        try (line + "\n").write(toFile: results, atomically: true, encoding: .utf8)
        try Data().write(to: URL(fileURLWithPath: results + ".journal"))
        let run = try BulkRun.open(header: Self.header(.alert), results: nil, resume: results)
        #expect(run.state?.header?.resendUncertain == nil)
        #expect(run.header.resendUncertain == nil)
        run.release()
    }
}
