import Foundation
import Testing

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

    /// A path named `name` in a new temporary folder of its own, inside the test process's one
    /// folder, which is removed when the process exits (a folder per call, left behind, piled up
    /// by the thousand on a machine that runs the suite often).
    public static func temporaryPath(_ name: String) throws -> String {
        let folder = processFolder.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }

    /// `apnsctl-tests-<pid>-<uuid>` in the temporary directory, made on first use; an exit
    /// handler removes it with everything in it.
    static let processFolder: URL = {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("apnsctl-tests-\(getpid())-\(UUID().uuidString)")
        atexit { try? FileManager.default.removeItem(at: TestPaths.processFolder) }
        return folder
    }()

    /// The same, with `contents` written to it.
    public static func temporaryFile(_ name: String, contents: String? = nil) throws -> String {
        let path = try temporaryPath(name)
        if let contents { try contents.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }
}

/// The permission bits of the file at `path` (0o600 for a file only its owner may read and write).
public func posixPermissions(_ path: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}
