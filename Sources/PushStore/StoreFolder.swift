import CredentialFormats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the folder given as a store holds, judged before anything reads or writes it, so that a
/// folder that is not a store, or a store that lost its index, is never taken for an empty one.
package enum StoreFolder: Equatable {
    /// Nothing there yet, or an empty folder: a new store.
    case new
    /// A store with its index.
    case store
    /// A store's skeleton (lock file, empty credentials folder) without an index: nothing to lose.
    case emptyStore
    /// Credential files without the index that says what they are.
    case indexMissing(files: [String])
    /// Something else: a regular file, or a folder with other things in it and no index.
    case notAStore(reason: String)
    /// A git clone with nothing checked out (its remote's HEAD names a branch it does not have).
    case cloneWithoutCheckout(branches: [String])

    /// The branches a clone's `origin` has, as `git clone` recorded them.
    static func remoteBranches(of root: URL) -> [String] {
        let git = root.appendingPathComponent(".git")
        var names = Set(
            (try? FileManager.default.contentsOfDirectory(
                atPath: git.appendingPathComponent("refs/remotes/origin").path
            ))
                ?? []
        )
        let packed = (try? String(contentsOf: git.appendingPathComponent("packed-refs"), encoding: .utf8)) ?? ""
        for line in packed.split(separator: "\n") {
            guard let range = line.range(of: " refs/remotes/origin/") else { continue }
            names.insert(String(line[range.upperBound...]))
        }
        names.remove("HEAD")
        return names.sorted()
    }

    /// Names a store folder may hold besides the index.
    static let storeNames: Set<String> = [".lock", "credentials", ".writing", ".team-setup.json"]

    static func inspect(_ root: URL) throws -> StoreFolder {
        var status = stat()
        guard stat(root.path, &status) == 0 else {
            if errno == ENOENT { return .new }
            throw CredentialError(
                .storeError,
                path: root.path,
                "The store folder cannot be examined (\(String(cString: strerror(errno)))).",
                hint: "Check the folder's owner and permissions."
            )
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            return .notAStore(reason: "This is not a folder, so it cannot be a store")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: root.path)
        } catch {
            throw CredentialError(
                .storeError,
                path: root.path,
                "The store folder cannot be read (\(error.localizedDescription)).",
                hint: "Check the folder's owner and permissions."
            )
        }
        if names.contains("index.json") { return .store }
        if names.isEmpty { return .new }
        let files = credentialFiles(in: root)
        if !files.isEmpty { return .indexMissing(files: files) }
        let others = names.filter { !storeNames.contains($0) && !isTemporary($0) }
        if others == [".git"] { return .cloneWithoutCheckout(branches: remoteBranches(of: root)) }
        if !others.isEmpty {
            return .notAStore(
                reason:
                    "This folder holds other things (\(preview(others.sorted()))) and no index.json, so it is not an apnsctl store"
            )
        }
        return .emptyStore
    }

    /// Whether `path` is a store's folder: its index beside the lock, the credentials folder or a
    /// team store's member list (an index.json alone is common to many other kinds of folder).
    static func isStoreFolder(_ path: String) -> Bool {
        let manager = FileManager.default
        guard manager.fileExists(atPath: path + "/index.json") else { return false }
        return [".lock", "credentials", "team.json"].contains { manager.fileExists(atPath: path + "/" + $0) }
    }

    /// The regular files in `credentials/` (temporary files of an interrupted write aside).
    static func credentialFiles(in root: URL) -> [String] {
        let folder = root.appendingPathComponent("credentials")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !isTemporary($0) }.sorted().map { "credentials/\($0)" }
    }

    /// `.NAME.UUID.tmp`: a file PrivateFile was writing when it was interrupted.
    static func isTemporary(_ name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".tmp")
    }

    /// `ALIAS.TAG.cert.pem` or `ALIAS.TAG.p12` (TAG: 12 hex digits), or a temporary file.
    static func isStoreMade(_ name: String) -> Bool {
        if isTemporary(name) { return true }
        let stem: Substring
        if name.hasSuffix(".cert.pem") {
            stem = name.dropLast(".cert.pem".count)
        } else if name.hasSuffix(".p12") {
            stem = name.dropLast(".p12".count)
        } else {
            return false
        }
        guard let dot = stem.lastIndex(of: ".") else { return false }
        let tag = stem[stem.index(after: dot)...]
        return dot > stem.startIndex && tag.count == 12 && tag.allSatisfy(\.isHexDigit)
    }

    /// Refuses a store folder that another user owns, or that others may write to: whoever can
    /// write there can swap the index or a secret's file under this user's commands.
    package static func checkOwnership(_ root: URL) throws {
        var status = stat()
        guard lstat(root.path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return }
        let path = ShellWords.quote(root.path)
        if status.st_uid != geteuid() {
            throw CredentialError(
                .unsafeStoreFolder,
                path: root.path,
                "The store folder belongs to another user (uid \(status.st_uid)); apnsctl read and wrote nothing there.",
                hint: "Use a store folder of your own, or take this one over: chown -R \(geteuid()) \(path)"
            )
        }
        if status.st_mode & 0o022 != 0 {
            throw CredentialError(
                .unsafeStoreFolder,
                path: root.path,
                "Others may write to the store folder (mode \(String(status.st_mode & 0o777, radix: 8))); apnsctl read and wrote nothing there.",
                hint: "Make it private, then run the command again: chmod 700 \(path)"
            )
        }
    }

    static func preview(_ names: [String], limit: Int = 6) -> String {
        let shown = names.prefix(limit).joined(separator: ", ")
        return names.count > limit ? "\(shown) and \(names.count - limit) more" : shown
    }
}

extension CredentialStore {
    /// Throws when the folder is not a store, or is a store whose index is missing; a new or
    /// empty folder is a store with nothing in it.
    public func checkFolder() throws {
        if medium != nil { return }
        _ = try folderState()
    }

    func folderState() throws -> StoreFolder {
        try StoreFolder.checkOwnership(root)
        let state = try StoreFolder.inspect(root)
        switch state {
        case .new, .store, .emptyStore:
            return state
        case .notAStore(let reason):
            throw CredentialError(
                .notAStore,
                path: root.path,
                "\(reason); apnsctl read and wrote nothing there.",
                hint: "Keep the store in an empty or new folder of its own."
            )
        case .cloneWithoutCheckout(let branches):
            let branch = branches.first { $0 == "main" } ?? branches.first { $0 == "master" } ?? branches.first
            throw CredentialError(
                .notCheckedOut,
                path: root.path,
                "This folder is a git clone with nothing checked out: its remote's HEAD names a branch the remote does not have"
                    + (branches.isEmpty ? "." : " (its branches: \(branches.joined(separator: ", "))).")
                    + " apnsctl read and wrote nothing there.",
                hint: branch.map {
                    "Check out the team store's branch: git -C \(ShellWords.quote(root.path)) checkout \($0)"
                }
                    ?? "The remote holds no commits yet: ask a member to push the team store (a sync from their clone pushes it)."
            )
        case .indexMissing(let files):
            throw CredentialError(
                .indexMissing,
                path: root.path,
                "The store has no index.json, but its credentials folder holds \(files.count) file(s) (\(StoreFolder.preview(files))); apnsctl will not treat it as empty, and changes nothing until it is repaired.",
                hint: Self.recoveryHint
            )
        }
    }

    /// What to do when the index is lost or damaged, in words (see docs/store.md).
    static let recoveryHint =
        "Restore index.json from a backup; or move the whole folder aside, import each credential again from its original file (the .p12 files in credentials/ are the bundles as imported), then delete the moved folder."

    /// The credential files present, for errors about an index that cannot be read.
    func credentialFilesPresent() -> [String] {
        StoreFolder.credentialFiles(in: root)
    }
}
