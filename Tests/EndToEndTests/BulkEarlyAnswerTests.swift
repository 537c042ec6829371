import Foundation
import TestSupport
import Testing

/// A gateway that answers before reading the body and then resets the stream (nginx's habit):
/// a rejection's reason must reach the sender before the reset, and a rejection is final, so
/// every line keeps the status and reason APNs gave and nothing is sent twice.
@Suite(.serialized)
struct BulkEarlyAnswerTests {
    @Test func everyRejectionKeepsItsStatusAndReasonAndIsSentOnce() throws {
        let folder = try TemporaryFolder()
        let (tokens, lines, tokenFile) = try BulkSendTests.makeTokens(4_000, seed: 71, in: folder)
        // Every other device has unregistered: 410 with the time APNs gives.
        var registry: [String: [String: Any]] = [:]
        for (index, token) in tokens.enumerated() {
            var entry: [String: Any] = ["topic": "com.example.app", "environment": "sandbox"]
            if index % 2 == 0 { entry["unregistered_at"] = 1_700_000_000_000 }
            registry[token] = entry
        }
        let devices = folder.path("devices.json")
        try JSONSerialization.data(withJSONObject: registry).write(to: URL(fileURLWithPath: devices))
        let (pki, gateway, _) = try BulkSendTests().gateway(["--early-answer", "--devices", devices])
        let resultsFile = folder.path("results.jsonl")
        let run = try BulkSendTests.run(
            BulkOneRunTests.arguments(pki, gateway, tokens: tokenFile) + ["--results", resultsFile]
        )
        #expect(run.status == 1, "some lines were rejected: exit \(run.status): \(run.stderr)")
        let results = try BulkSendTests.results(resultsFile)
        BulkSendTests.expectOneResultPerLine(results, lines: lines)
        let unregistered = Set(tokens.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        var wrong: [String] = []
        for result in results {
            let token = result["token"] as? String ?? ""
            let attempts = result["attempts"] as? Int
            if unregistered.contains(token) {
                if result["status"] as? Int != 410 || result["reason"] as? String != "Unregistered"
                    || result["timestamp"] == nil || attempts != 1
                {
                    wrong.append("\(result)")
                }
            } else if result["status"] as? Int != 200 || attempts != 1 {
                wrong.append("\(result)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) lines lost their answer or were sent again, e.g. \(wrong.prefix(2))")
        #expect(run.stderr.contains("Unregistered"), "the summary counts the reason: \(run.stderr)")
        #expect(try gateway.deliveries().count == tokens.count - unregistered.count)
    }
}
