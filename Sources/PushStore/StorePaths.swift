import CredentialFormats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An index entry that names a file outside the store's `credentials/` folder (through `..`, an
/// absolute path or a symbolic link). Such a path is never read, followed or deleted: the index
/// was edited outside apnsctl, and obeying it would let a hostile index reach any file.
public struct DamagedEntry: Sendable, Equatable {
    public var alias: String
    /// The path as the index gives it.
    public var path: String
    /// Where it leads, when that could be worked out.
    public var resolved: String?
    /// Where the store's credentials folder leads, when it is a link out of the store: then the
    /// folder, not the entry, is what to repair.
    public var credentialsFolderLink: String? = nil

    /// What is wrong, naming the alias and the offending path.
    public var message: String {
        let target = resolved.map { $0 == path ? "" : " (which leads to \($0))" } ?? ""
        return
            "The index entry \(alias) names the file \"\(path)\"\(target), outside the store's credentials folder; apnsctl did not read, follow or delete it."
    }

    public static let hint =
        "The index was changed outside apnsctl: remove the entry (files outside the store are left alone) and import the credential again, or restore index.json from a backup."

    public var error: CredentialError {
        if let credentialsFolderLink {
            return CredentialError(
                .storeError,
                message + " The store's credentials folder is a link to \(credentialsFolderLink).",
                hint: "Make credentials a plain folder inside the store again (move the link away and its files back).",
                alias: alias
            )
        }
        return CredentialError(.entryOutsideStore, message, hint: Self.hint, alias: alias)
    }
}

/// Where the files an index entry names really are.
struct StorePaths {
    /// The store folder with its symbolic links resolved.
    let realRoot: String

    init(root: URL) {
        realRoot = Self.realPath(root.path) ?? root.path
    }

    /// The credentials folder as it must be: a real folder directly inside the store.
    var credentialsFolder: String { realRoot + "/credentials" }

    /// The absolute path of `relative` when it resolves (after `..`, symbolic links and absolute
    /// paths) to a file inside the credentials folder; else nil, with where it leads.
    func resolve(_ relative: String) -> (path: String?, resolved: String?) {
        guard !relative.isEmpty, !relative.contains("\0") else { return (nil, nil) }
        let joined = relative.hasPrefix("/") ? relative : realRoot + "/" + relative
        let resolved: String
        if let real = Self.realPath(joined) {
            resolved = real
        } else {
            // A file that is not there (any more): resolve its folder and judge the rest by name.
            let folder = (joined as NSString).deletingLastPathComponent
            let name = (joined as NSString).lastPathComponent
            if name == ".." || name == "." { return (nil, Self.normalized(joined)) }
            // A folder that is not there either holds no link to follow: judge the path by name.
            resolved = Self.realPath(folder).map { $0 + "/" + name } ?? Self.normalized(joined)
        }
        let inside =
            resolved.hasPrefix(credentialsFolder + "/")
            && !resolved.dropFirst(credentialsFolder.count + 1).contains("/")
        return (inside ? resolved : nil, resolved)
    }

    /// The entry's damage, if any of its files lies outside the credentials folder.
    func damage(of credential: StoredCredential) -> DamagedEntry? {
        for relative in [credential.certificateFile, credential.bundleFile].compactMap({ $0 }) {
            let (path, resolved) = resolve(relative)
            if path == nil { return damage(credential.alias, path: relative, resolved: resolved) }
        }
        return nil
    }

    func damage(_ alias: String, path: String, resolved: String?) -> DamagedEntry {
        let folder = Self.realPath(credentialsFolder)
        return DamagedEntry(
            alias: alias,
            path: path,
            resolved: resolved,
            credentialsFolderLink: folder == credentialsFolder ? nil : folder
        )
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `..` and `.` taken out by name, for reporting where a path that does not exist leads.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." {
                _ = parts.popLast()
            } else {
                parts.append(part)
            }
        }
        return "/" + parts.joined(separator: "/")
    }
}

extension CredentialStore {
    var paths: StorePaths { StorePaths(root: root) }

    /// The index entries that name files outside the store; `list` and `check` report them.
    public func damage(of credential: StoredCredential) -> DamagedEntry? {
        if medium != nil {
            let outside = [credential.certificateFile, credential.bundleFile].compactMap { $0 }.first { !isInside($0) }
            return outside.map { DamagedEntry(alias: credential.alias, path: $0, resolved: nil) }
        }
        return paths.damage(of: credential)
    }

    /// The absolute path of a file an index entry names, refusing one outside the store.
    package func entryFile(_ relative: String, of credential: StoredCredential) throws -> String {
        let (path, resolved) = paths.resolve(relative)
        guard let path else {
            throw paths.damage(credential.alias, path: relative, resolved: resolved).error
        }
        return path
    }
}
