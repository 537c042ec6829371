import Foundation
import NIOHPACK
import PushCore

/// An answer as APNs writes it: `:status`, the id header, and a JSON body for a rejection.
enum AnswerEncoding {
    static func encode(_ decision: Decision, gateway: LocalGateway) -> (HPACKHeaders, [UInt8]) {
        var responseHeaders = HPACKHeaders()
        // The ids are new for every answer: not worth a place in the HPACK table.
        responseHeaders.add(name: ":status", value: statusText(decision.status))
        responseHeaders.add(name: decision.idHeader, value: decision.apnsID, indexing: .nonIndexable)
        for (name, value) in decision.extraHeaders { responseHeaders.add(name: name, value: value) }
        if decision.status == 200, decision.isNotification, gateway.configuration.environment == .sandbox {
            responseHeaders.add(
                name: APNsHeader.uniqueID,
                value: gateway.validator.randomUUIDString(),
                indexing: .nonIndexable
            )
        }
        var bodyBytes: [UInt8] = []
        if let reason = decision.reason {
            var object: [String: Any] = ["reason": reason.rawValue]
            if let timestamp = decision.timestamp { object["timestamp"] = timestamp }
            bodyBytes = (try? [UInt8](JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))) ?? []
            responseHeaders.add(name: "content-type", value: "application/json; charset=utf-8")
            responseHeaders.add(name: "content-length", value: String(bodyBytes.count))
        } else if let body = decision.body {
            bodyBytes = body
            responseHeaders.add(name: "content-type", value: "application/json")
            responseHeaders.add(name: "content-length", value: String(bodyBytes.count))
        }
        return (responseHeaders, bodyBytes)
    }

    /// `:status` values as text, made once.
    static func statusText(_ status: Int) -> String {
        switch status {
        case 200: "200"
        case 400: "400"
        case 403: "403"
        default: String(status)
        }
    }

}
