import Foundation

/// The names of a report's `topics`, which every report gives as objects (`name`, `kinds`).
public func topicNames(_ value: Any?) -> [String]? {
    (value as? [[String: Any]])?.compactMap { $0["name"] as? String }
}

/// The `code` of a report's or result line's `error` object.
public func errorCode(_ object: [String: Any]) -> String? {
    (object["error"] as? [String: Any])?["code"] as? String
}
