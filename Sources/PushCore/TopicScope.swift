/// Which app a topic belongs to: `com.a.voip`, `com.a.complication`... are `com.a`'s.
public enum TopicScope {
    /// The bundle ID a topic belongs to (Apple's suffixes are ``PushType/topicSuffixes``).
    public static func app(of topic: String) -> String {
        PushType.suffixed(topic).map { String(topic.dropLast($0.suffix.count)) } ?? topic
    }

    /// Whether a credential with these topics is one of the app's (or the derived topic's) own.
    public static func relates(_ topics: [String], to topic: String) -> Bool {
        let app = app(of: topic)
        return topics.contains { $0 == topic || self.app(of: $0) == app }
    }

    /// A token key recorded for bundle IDs may push to their derived topics too.
    public static func tokenKey(_ topics: [String], covers topic: String) -> Bool {
        topics.contains(topic) || topics.contains(app(of: topic))
    }
}
