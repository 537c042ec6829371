import Foundation

/// Where the tests find the repository's fixtures, from this file's location so that they work
/// from any checkout; and temporary files and folders, one way for every test target.
public enum TestPaths {
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    public static let certs = packageRoot.appendingPathComponent("certs")
    /// Real Apple-issued certificates kept beside the project, never copied into it.
    public static let appleIssued = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/testdata/apple-issued")

    public static func cert(_ relative: String) -> String { certs.appendingPathComponent(relative).path }

    /// A path named `name` in a new temporary folder of its own.
    public static func temporaryPath(_ name: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apnsctl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }

    /// The same, with `contents` written to it.
    public static func temporaryFile(_ name: String, contents: String? = nil) throws -> String {
        let path = try temporaryPath(name)
        if let contents { try contents.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }
}
