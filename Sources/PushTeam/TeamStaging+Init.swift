import CredentialFormats
import Foundation
import PushStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TeamStaging {
    /// Before `team init` makes anything: the plain store's folder must hold only what its first
    /// commit may (the index and the files it names; the lock, the journal and temporary files
    /// are never committed), so that init never stops half-way at that commit over a stray file.
    static func checkBeforeInit(root: URL, index: StoreIndex) throws {
        let named = Set(index.credentials.flatMap { [$0.certificateFile, $0.bundleFile].compactMap { $0 } })
        var findings: [Finding] = []
        func walk(_ relative: String) {
            let folder = relative.isEmpty ? root.path : root.appendingPathComponent(relative).path
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() {
                let path = relative.isEmpty ? name : relative + "/" + name
                if relative.isEmpty,
                    [".git", ".gitignore", ".lock", ".writing", SetupMarker.fileName, "index.json"].contains(name)
                {
                    continue
                }
                if name.hasPrefix("."), name.hasSuffix(".tmp") { continue }
                var status = stat()
                guard lstat(root.appendingPathComponent(path).path, &status) == 0 else { continue }
                switch status.st_mode & S_IFMT {
                case S_IFDIR where path == "credentials":
                    walk(path)
                case S_IFREG where named.contains(path):
                    continue
                case S_IFDIR:
                    findings.append(Finding(path: path, why: "a folder apnsctl did not write", restorable: false))
                case S_IFLNK:
                    findings.append(Finding(path: path, why: "a link apnsctl did not write", restorable: false))
                default:
                    findings.append(Finding(path: path, why: "a file apnsctl did not write", restorable: false))
                }
            }
        }
        walk("")
        if !findings.isEmpty {
            let staging = TeamStaging(git: Git(directory: root.path))
            throw staging.refusal(findings, committing: "the team store's first commit")
        }
    }
}
