import CredentialFormats
import Crypto
import Foundation
import NIOConcurrencyHelpers

/// One request as it came off a stream.
struct IncomingRequest {
    /// Every header, pseudo-headers included, in arrival order.
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// False when the gateway answers before the body (``LocalGateway/Configuration/Faults/answerEarlyAndReset``).
    var bodyRead: Bool

    func values(_ name: String) -> [String] { headers.filter { $0.name == name }.map(\.value) }
    func first(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// The headers the validator reads, taken from a request in one pass: the first value of
/// each, and whether any that may appear once only came twice. A request carries about eight
/// headers; looking each name up separately (and hashing every name against the set of single
/// headers) was a visible share of the validator's time (docs/performance.md).
struct NotificationHeaders {
    var method: String?
    var path: String?
    var topic: String?
    var authorization: String?
    var id: String?
    var pushType: String?
    var priority: String?
    var expiration: String?
    var collapseID: String?
    /// A header of ``RequestValidator/singleHeaders`` came more than once.
    var duplicated = false

    init(_ headers: [(name: String, value: String)]) {
        var seen: UInt16 = 0
        for header in headers {
            let bit: UInt16
            let value = header.value
            switch header.name {
            case ":method":
                bit = 1 << 0
                if method == nil { method = value }
            case ":path":
                bit = 1 << 1
                if path == nil { path = value }
            case ":scheme": bit = 1 << 2
            case ":authority": bit = 1 << 3
            case APNsHeader.topic:
                bit = 1 << 4
                if topic == nil { topic = value }
            case APNsHeader.pushType:
                bit = 1 << 5
                if pushType == nil { pushType = value }
            case APNsHeader.priority:
                bit = 1 << 6
                if priority == nil { priority = value }
            case APNsHeader.expiration:
                bit = 1 << 7
                if expiration == nil { expiration = value }
            case APNsHeader.collapseID:
                bit = 1 << 8
                if collapseID == nil { collapseID = value }
            case APNsHeader.id:
                bit = 1 << 9
                if id == nil { id = value }
            case APNsHeader.authorization:
                bit = 1 << 10
                if authorization == nil { authorization = value }
            default: continue
            }
            if seen & bit != 0 { duplicated = true }
            seen |= bit
        }
    }
}
