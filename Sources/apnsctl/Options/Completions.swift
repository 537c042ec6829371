import ArgumentParser
import Foundation
import PushStore
import PushVaultStore

/// What the shell completion scripts offer for the arguments that are not plain words.
///
/// The custom kinds run inside apnsctl when the user presses TAB: the generated script calls
/// the binary with the command line so far, and the closure answers with candidates. They
/// read only the store's index, never the Secret Service, and answer nothing on any error.
extension CompletionKind {
    /// The file names a credential comes in.
    static let credentialFileExtensions = ["p12", "pfx", "pem", "cer", "crt", "der", "p8"]

    /// A certificate bundle, certificate or token key file.
    static let credentialFile: CompletionKind = .file(extensions: credentialFileExtensions)

    /// The aliases of the store the command line names.
    static let storedAlias: CompletionKind = .custom { words, _, prefix in
        StoreCompletion.aliases(words: words, prefix: prefix)
    }

    /// A stored alias or a credential file.
    static let storedAliasOrFile: CompletionKind = .custom { words, _, prefix in
        StoreCompletion.aliases(words: words, prefix: prefix) + StoreCompletion.files(prefix: prefix)
    }

    /// A PEM file.
    static let pemFile: CompletionKind = .file(extensions: ["pem", "crt"])
}

enum StoreCompletion {
    /// The aliases in the store chosen as the command itself would choose it: `--store DIR` on
    /// the command line, else $APNSCTL_STORE, else $XDG_DATA_HOME/apnsctl.
    static func aliases(words: [String], prefix: String) -> [String] {
        let explicit = storeArgument(in: words)
        // A store in Vault is not asked over the network while a shell completes a word.
        if VaultStore.isVaultLocation(explicit ?? ProcessInfo.processInfo.environment["APNSCTL_STORE"] ?? "") {
            return []
        }
        let store = CredentialStore(root: CredentialStore.defaultRoot(explicit: explicit))
        guard let credentials = try? store.listFolder() else { return [] }
        return credentials.map(\.alias).filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// The value of the last `--store` on the command line, unquoted and with `~` expanded.
    static func storeArgument(in words: [String]) -> String? {
        var found: String?
        for (index, word) in words.enumerated() {
            if word == "--store", index + 1 < words.count {
                found = words[index + 1]
            } else if word.hasPrefix("--store=") {
                found = String(word.dropFirst("--store=".count))
            }
        }
        guard var value = found.map(shellUnquoted), !value.isEmpty else { return nil }
        if value.hasPrefix("~") { value = (value as NSString).expandingTildeInPath }
        return value
    }

    /// A shell word as typed, without its quotes and backslashes (the common cases).
    static func shellUnquoted(_ word: String) -> String {
        var result = ""
        var quote: Character?
        var escaped = false
        for character in word {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" && quote != "'" {
                escaped = true
            } else if let open = quote {
                if character == open { quote = nil } else { result.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Credential files and folders that start with `prefix`, for arguments that take either an
    /// alias or a file (a custom completion replaces the shell's own file completion).
    static func files(prefix: String) -> [String] {
        let typed = shellUnquoted(prefix)
        let folderPart = typed.contains("/") ? String(typed[...typed.lastIndex(of: "/")!]) : ""
        let namePart = String(typed.dropFirst(folderPart.count))
        let folder = folderPart.isEmpty ? "." : (folderPart as NSString).expandingTildeInPath
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var candidates: [String] = []
        for name in names.sorted() where name.hasPrefix(namePart) && (namePart.hasPrefix(".") || !name.hasPrefix(".")) {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(
                atPath: (folder as NSString).appendingPathComponent(name),
                isDirectory: &isFolder
            )
            let fileExtension = (name as NSString).pathExtension.lowercased()
            if isFolder.boolValue {
                candidates.append(folderPart + name + "/")
            } else if CompletionKind.credentialFileExtensions.contains(fileExtension) {
                candidates.append(folderPart + name)
            }
        }
        return candidates
    }
}
