internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// The secrets of `items` read together: each store's items listed with their attributes in
    /// one search (``listItems(matching:connection:what:)``), each item's path found among them by
    /// the attributes the one-item lookup searches for, then every secret in one `GetSecrets`
    /// call, where asking item by item costs a search, a session and a `GetSecrets` round trip
    /// each (docs/performance.md, "check over a store"). No proxy object is made per item:
    /// libsecret's search with its secrets loaded makes one, at five D-Bus messages each.
    ///
    /// Throws only what ``ensureReady()`` throws, the answer a lookup of any one item would
    /// start with. Nothing is unlocked and no prompt can appear: an item that is locked, that two
    /// keyring items claim, whose secret is not text or cannot be decoded, and a missing one are
    /// left out, as is everything when a call fails; the caller asks for those alone, which
    /// answers or says why as the one-item lookup does.
    public func lookup(_ items: [SecretItem]) throws -> [SecretItem: SecretBytes] {
        guard !items.isEmpty else { return [:] }
        let connection = try readyConnection()
        var paths: [String: SecretItem] = [:]
        for (store, wanted) in Dictionary(grouping: Set(items), by: \.store) {
            guard
                let listed = try? listItems(
                    matching: ["application": "apnsctl", "store": store],
                    connection: connection,
                    what: "find the secret"
                )
            else { continue }
            for (path, item) in Self.onlyUnlockedPaths(of: wanted, among: listed) { paths[path] = item }
        }
        guard !paths.isEmpty, let session = SharedSession.shared.session(store: self) else { return [:] }
        let texts = secrets(at: Array(paths.keys), in: session)
        var found: [SecretItem: SecretBytes] = [:]
        for (path, item) in paths {
            if let text = texts[path], let secret = try? decode(text, kind: item.kind) { found[item] = secret }
        }
        return found
    }

    /// Each item's path where exactly one listed item has its attributes (as a search for them
    /// would find) and that one is unlocked. An item whose attributes could not be read might be
    /// any of them: then none is answered here.
    static func onlyUnlockedPaths(of items: [SecretItem], among listed: [ListedItem]) -> [(String, SecretItem)] {
        guard listed.allSatisfy({ $0.attributes != nil }) else { return [] }
        // Only an item with the same alias and kind can have all of an item's attributes.
        var byName: [String: [ListedItem]] = [:]
        for entry in listed {
            guard let attributes = entry.attributes, let alias = attributes["alias"], let kind = attributes["kind"]
            else { continue }
            byName["\(kind)\u{0}\(alias)", default: []].append(entry)
        }
        return items.compactMap { item in
            let wanted = item.attributes
            let matches = (byName["\(item.kind.rawValue)\u{0}\(item.alias)"] ?? []).filter { entry in
                wanted.allSatisfy { entry.attributes?[$0.key] == $0.value }
            }
            guard matches.count == 1, !matches[0].locked else { return nil }
            return (matches[0].path, item)
        }
    }
}
