import Foundation
import PushStore
import Testing

/// The keyring seen from outside, with the program a user has: `secret-tool` to store an item
/// as another program would, and to clear what a test stored.
public enum SecretTool {
    /// Stores `text` under `item`'s attributes as another program would; `extra` adds
    /// attributes or replaces the item's own, and `schema` names another schema.
    public static func store(
        _ text: String,
        for item: SecretItem,
        extra: [(String, String)] = [],
        schema: String = LibSecretStore.schemaName
    ) throws {
        var arguments = ["secret-tool", "store", "--label", item.label]
        var attributes = attributes(of: item, schema: schema)
        for (name, value) in extra {
            if let index = attributes.firstIndex(where: { $0.0 == name }) {
                attributes[index].1 = value
            } else {
                attributes.append((name, value))
            }
        }
        for (name, value) in attributes { arguments += [name, value] }
        let output = try run(arguments, input: Data(text.utf8))
        #expect(output.status == 0)
    }

    /// Removes every item apnsctl keeps for the store `store` as a user would: the clean-up of
    /// what a test stored, for a `defer` (which cannot await the store's own removal).
    public static func clear(store: String) {
        _ = try? run(["secret-tool", "clear", "application", "apnsctl", "store", store])
    }

    /// The attributes apnsctl stores `item` under, its schema's first.
    private static func attributes(of item: SecretItem, schema: String) -> [(String, String)] {
        [
            ("xdg:schema", schema), ("application", "apnsctl"), ("store", item.store), ("alias", item.alias),
            ("kind", item.kind.rawValue), (item.kind == .tokenKey ? "key-id" : "fingerprint", item.identifier),
        ]
    }

    private static func run(_ arguments: [String], input: Data? = nil) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let feed = Pipe()
        process.standardInput = feed
        try process.run()
        if let input { feed.fileHandleForWriting.write(input) }
        try feed.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }
}
