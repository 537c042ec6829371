import Foundation
import TestSupport
import Testing

/// Everything under `folder`, by relative path: a file's bytes, a link's target, or a folder mark.
func snapshot(_ folder: String) throws -> [String: String] {
    var result: [String: String] = [:]
    let manager = FileManager.default
    guard let enumerator = manager.enumerator(atPath: folder) else { return result }
    while let relative = enumerator.nextObject() as? String {
        let full = folder + "/" + relative
        if let target = try? manager.destinationOfSymbolicLink(atPath: full) {
            result[relative] = "link -> " + target
            continue
        }
        var isDirectory: ObjCBool = false
        _ = manager.fileExists(atPath: full, isDirectory: &isDirectory)
        result[relative] =
            isDirectory.boolValue ? "folder" : try Data(contentsOf: URL(fileURLWithPath: full)).base64EncodedString()
    }
    return result
}

/// Rewrites one index entry's file paths, as a hostile or careless edit of index.json would.
func editIndexEntry(store: String, alias: String, certificateFile: String?, bundleFile: String?) throws {
    let url = URL(fileURLWithPath: store + "/index.json")
    var index = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    var credentials = try #require(index["credentials"] as? [[String: Any]])
    let position = try #require(credentials.firstIndex { $0["alias"] as? String == alias })
    credentials[position]["certificate_file"] = certificateFile
    credentials[position]["bundle_file"] = bundleFile
    index["credentials"] = credentials
    try JSONSerialization.data(withJSONObject: index, options: [.prettyPrinted]).write(to: url)
}

/// An index entry whose paths lead outside the store's credentials folder (through `..`, an
/// absolute path, or a symbolic link) is reported by list and check, and nothing outside the
/// store is read, followed or deleted by list, check, import or remove.
@Suite(.needsPrivateSecretService)
struct IndexPathTraversalTests {
    typealias Store = StoreCommandTests.Store
    static let alias = "com.example.app-production"

    enum Route: String, CaseIterable, CustomTestStringConvertible {
        case dotDot, absolute, symlink
        var testDescription: String { rawValue }
    }

    /// A store with one healthy credential and one whose entry points at `outside`, which holds
    /// a real certificate, a bundle and a folder with a file: all things a remove could delete.
    static func damagedStore(_ route: Route) throws -> (store: Store, outside: String, certificate: String) {
        let store = try Store.withProductionAndSandbox()

        let outside = store.folder.path("outside")
        try FileManager.default.createDirectory(atPath: outside + "/dir", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: CLI.cert("p12/openssl3-default.p12"), toPath: outside + "/victim.p12")
        let ownCertificate = try #require(
            try FileManager.default.contentsOfDirectory(atPath: store.path + "/credentials").first {
                $0.hasPrefix(alias) && $0.hasSuffix(".cert.pem")
            }
        )
        try FileManager.default.copyItem(
            atPath: store.path + "/credentials/" + ownCertificate,
            toPath: outside + "/victim.cert.pem"
        )
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: outside + "/dir/precious.txt"))

        let certificate: String
        let bundle: String
        switch route {
        case .dotDot:
            certificate = "credentials/../../outside/victim.cert.pem"
            bundle = "credentials/../../outside/dir"
        case .absolute:
            certificate = outside + "/victim.cert.pem"
            bundle = outside + "/dir"
        case .symlink:
            // Links named as the store names its own files, so only where they lead gives them away.
            certificate = "credentials/\(alias).aaaaaaaaaaaa.cert.pem"
            bundle = "credentials/\(alias).bbbbbbbbbbbb.p12"
            try FileManager.default.createSymbolicLink(
                atPath: store.path + "/" + certificate,
                withDestinationPath: outside + "/victim.cert.pem"
            )
            try FileManager.default.createSymbolicLink(
                atPath: store.path + "/" + bundle,
                withDestinationPath: outside + "/dir"
            )
        }
        try editIndexEntry(store: store.path, alias: alias, certificateFile: certificate, bundleFile: bundle)
        return (store, outside, certificate)
    }

    @Test(arguments: Route.allCases)
    func nothingOutsideTheStoreIsTouched(_ route: Route) throws {
        let (store, outside, offending) = try Self.damagedStore(route)
        let before = try snapshot(outside)
        let links =
            route == .symlink ? try snapshot(store.path + "/credentials").filter { $0.value.hasPrefix("link") } : [:]

        // list: the damaged entry is named with its path, and the exit status says there is a problem.
        let listed = try store.run(["list"])
        #expect(listed.status == 1, "\(listed.stdout)\(listed.stderr)")
        #expect(listed.stdout.contains("damaged"))
        #expect(listed.stdout.contains(Self.alias) && listed.stdout.contains(offending))
        #expect(listed.stdout.contains("apnsctl remove \(Self.alias) --store \(store.path)"))
        let json = try store.run(["list", "--json"])
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let rows = try #require(object["credentials"] as? [[String: Any]])
        let damaged = rows.filter { $0["damaged"] != nil }
        #expect(damaged.map { $0["credential"] as? String } == [Self.alias])
        #expect((damaged.first?["damaged"] as? [String: Any])?["path"] as? String == offending)

        // check, with and without secrets: could not check the entry, and says why and what to do.
        for arguments in [["check"], ["check", "--skip-secrets"], ["check", Self.alias]] {
            let checked = try store.run(arguments)
            #expect(checked.status == 2, "\(arguments): \(checked.stdout)\(checked.stderr)")
            #expect(checked.stdout.contains(Self.alias) && checked.stdout.contains(offending))
            #expect(checked.stdout.contains("apnsctl remove \(Self.alias) --store \(store.path)"))
            if arguments.count == 1 || arguments[1].hasPrefix("--") {
                // The healthy credential is still checked.
                #expect(checked.stdout.contains("✓ com.example.app-sandbox"))
            }
        }
        #expect(try store.run(["export", Self.alias, "--format", "pem"]).status == 2)

        // An import (which sweeps the store's leftovers) and a rotation of the healthy credential.
        let imported = try store.importFixtureBundle("p12/voip.p12", ["--alias", "another"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try snapshot(outside) == before)

        // remove takes the entry out of the index and leaves the files it names alone.
        let removed = try store.run(["remove", Self.alias])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("left alone"))
        #expect(try snapshot(outside) == before)
        if route == .symlink {
            // The links themselves are not followed and not removed either.
            let after = try snapshot(store.path + "/credentials").filter { $0.value.hasPrefix("link") }
            #expect(after == links)
        }
        try Self.moveUnaccountedAway(store)
        #expect(
            try store.listJSON().compactMap { $0["credential"] as? String }.sorted() == [
                "another", "com.example.app-sandbox",
            ]
        )
        #expect(try InterruptedRemoveTests.secret(store, Self.alias).isEmpty)
        #expect(try store.run(["check"]).status == 0)
    }

    /// The damaged entry's own files, left in credentials/ when its paths were edited away, are
    /// unaccounted: reported by list and check, never swept. The test moves them out, as the
    /// hint says, after checking they are still there.
    static func moveUnaccountedAway(_ store: Store) throws {
        let listed = try store.run(["list", "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let files = try #require(json["unaccounted_files"] as? [String])
        #expect(listed.status == (files.isEmpty ? 0 : 1))
        for file in files {
            #expect(file.hasPrefix(store.path + "/credentials/"))
            #expect(FileManager.default.fileExists(atPath: file))
            try FileManager.default.moveItem(
                atPath: file,
                toPath: store.folder.path((file as NSString).lastPathComponent)
            )
        }
    }

    @Test func replacingADamagedEntryLeavesItsFilesAlone() throws {
        let (store, outside, _) = try Self.damagedStore(.dotDot)
        let before = try snapshot(outside)
        let replaced = try store.importFixtureBundle("p12/3des-only.p12", ["--replace", Self.alias])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try snapshot(outside) == before)
        try Self.moveUnaccountedAway(store)
        #expect(try store.run(["list"]).status == 0)
    }

    @Test func aCredentialsFolderLinkedOutsideIsNeitherWrittenNorSwept() throws {
        let store = try Store()
        #expect(try store.run(["import", CLI.cert("pem/sandbox-bag-attributes.pem")]).status == 0)
        let outside = store.folder.path("outside")
        try FileManager.default.moveItem(atPath: store.path + "/credentials", toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: store.path + "/credentials", withDestinationPath: outside)
        // A file named as the store names its own, which a sweep of the linked folder would delete.
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: outside + "/other.0123456789ab.cert.pem"))
        let before = try snapshot(outside)

        let imported = try store.importFixtureBundle("p12/openssl3-default.p12")
        #expect(imported.status == 2)
        #expect(imported.stderr.contains(store.path + "/credentials") && imported.stderr.contains(outside))
        let listed = try store.run(["list"])
        #expect(listed.status == 1)
        #expect(listed.stdout.contains("is a link to \(outside)"))
        // The folder is what to repair: no hint to remove an entry that a remove could not reach.
        #expect(!listed.stdout.contains("apnsctl remove"))
        #expect(try store.run(["remove", "com.example.app-sandbox"]).status == 2)
        #expect(try snapshot(outside) == before)
    }
}
