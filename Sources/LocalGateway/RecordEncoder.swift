import Foundation
import PushCore

/// Writes a delivery record as one line of JSON with sorted keys, as JSONSerialization would,
/// at a fraction of its cost: the gateway writes one record per accepted notification, and
/// JSONSerialization on Linux spent longer on it than on the rest of the request.
enum RecordEncoder {
    /// RFC 3339 UTC to the second (`2026-11-22T05:46:03Z`), without a formatter: creating an
    /// ISO8601DateFormatter per notification cost more than everything else the gateway did.
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    static func line(_ record: [String: Any]) -> [UInt8]? {
        var text = ""
        text.reserveCapacity(512)
        guard append(record, to: &text) else { return nil }
        text += "\n"
        return Array(text.utf8)
    }

    /// False for a value JSON cannot hold; the caller then falls back to JSONSerialization.
    private static func append(_ value: Any, to text: inout String) -> Bool {
        switch value {
        case let string as String:
            appendString(string, to: &text)
        case let flag as Bool where type(of: value) == Bool.self:
            text += flag ? "true" : "false"
        // JSONSerialization on Linux gives a payload's true and false as NSNumber booleans
        // (Objective-C type "c"), which would otherwise be written as 1 and 0 by the cases below:
        // the record must show the payload as it came.
        case let number as NSNumber where type(of: value) != Bool.self && String(cString: number.objCType) == "c":
            text += number.boolValue ? "true" : "false"
        case let number as Int:
            text += String(number)
        case let number as Int64:
            text += String(number)
        case let number as Double:
            guard number.isFinite else { return false }
            text += number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case let object as [String: Any]:
            text += "{"
            var first = true
            for key in object.keys.sorted() {
                if !first { text += "," }
                first = false
                appendString(key, to: &text)
                text += ":"
                guard append(object[key]!, to: &text) else { return false }
            }
            text += "}"
        case let array as [Any]:
            text += "["
            for (index, element) in array.enumerated() {
                if index > 0 { text += "," }
                guard append(element, to: &text) else { return false }
            }
            text += "]"
        // Last: a cast to an Objective-C class would bridge dictionaries and arrays first.
        case let number as NSNumber:
            text += number.stringValue
        case is NSNull:
            text += "null"
        default:
            return false
        }
        return true
    }

    private static func appendString(_ value: String, to text: inout String) {
        TextEncoding.appendJSONString(value, to: &text)
    }
}
