import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Credential files that no index entry names.
///
/// An import writes its files before the index that names them, so a killed import leaves files
/// behind. Those are told apart by a journal: the import writes the names it is about to create
/// to `.writing` first, and the next change of the store deletes journaled files the index still
/// does not name. Every other unnamed file is *unaccounted*: most often the sign of an index.json
/// restored from an older backup, whose newer credentials still have their files. Those files are
/// reported and never deleted, since they may be the only copy of a certificate.
extension CredentialStore {
    static let journalName = ".writing"

    /// Records the files an import is about to write, before it writes them. Names a killed
    /// import journaled stay in the journal until a change of the store has dealt with them.
    func journal(files: [String]) throws {
        let names = journaledNames().union(files.map { ($0 as NSString).lastPathComponent }).sorted()
        try writeFile(Data((names.joined(separator: "\n") + "\n").utf8), to: Self.journalName)
    }

    /// The file names the last journal holds (empty without one).
    func journaledNames() -> Set<String> {
        let url = root.appendingPathComponent(Self.journalName)
        guard let data = try? InputFile.read(path: url.path, kind: .storeRecord),
            let text = String(bytes: data, encoding: .utf8)
        else { return [] }
        return Set(text.split(separator: "\n").map(String.init))
    }

    /// Store-made regular files of credentials/ that `index` does not name.
    func unreferencedFiles(_ index: StoreIndex) -> [String] {
        guard StorePaths.realPath(credentialsFolder.path) == paths.credentialsFolder else { return [] }
        let referenced = Set(
            index.credentials.flatMap { [$0.certificateFile, $0.bundleFile].compactMap { $0 } }.map {
                ($0 as NSString).lastPathComponent
            }
        )
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: credentialsFolder.path) else {
            return []
        }
        return names.sorted().filter { name in
            var status = stat()
            return !referenced.contains(name) && StoreFolder.isStoreMade(name)
                && lstat(credentialsFolder.appendingPathComponent(name).path, &status) == 0
                && status.st_mode & S_IFMT == S_IFREG
        }
    }

    /// Deletes the leftovers of interrupted imports: temporary files and journaled files the
    /// index does not name. Unaccounted files stay.
    func removeUnreferencedFiles(_ index: StoreIndex) {
        let journaled = journaledNames()
        for name in unreferencedFiles(index) where StoreFolder.isTemporary(name) || journaled.contains(name) {
            try? FileManager.default.removeItem(at: credentialsFolder.appendingPathComponent(name))
        }
        try? FileManager.default.removeItem(at: root.appendingPathComponent(Self.journalName))
    }

    /// Credential files of this store that its index does not name and no interrupted import
    /// explains: full paths, for a report. Never deleted by apnsctl.
    public func unaccountedFiles() throws -> [String] {
        try withSharedLock {
            let index = try readIndex()
            let journaled = journaledNames()
            return unreferencedFiles(index).filter { !StoreFolder.isTemporary($0) && !journaled.contains($0) }.map {
                credentialsFolder.appendingPathComponent($0).path
            }
        }
    }
}
