import ArgumentParser

/// Hints write a value the user must supply as a quoted placeholder (`--topic "<BUNDLE-ID>"`).
/// Pasted unchanged, it must not pass for a value: no bundle ID or topic holds `<` or `>`.
enum TopicPlaceholder {
    static func isPlaceholder(_ value: String) -> Bool { value.contains("<") || value.contains(">") }

    static func refuse(_ topic: String, option: String = "--topic") throws {
        if isPlaceholder(topic) {
            throw ValidationError(
                "\(option) \"\(topic)\" is a placeholder from a hint, not a bundle ID: put the app's bundle ID there (e.g. com.example.app). Nothing was changed."
            )
        }
    }
}
