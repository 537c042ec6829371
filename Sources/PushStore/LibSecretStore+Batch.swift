internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// The secrets of `items` read together: each store's items found in one search of the
    /// service with their secrets loaded (``search(_:in:loadingSecrets:what:)``: libsecret reads
    /// every unlocked item's secret in one `GetSecrets`), each item then matched among them by
    /// the attributes its one-item lookup searches for.
    ///
    /// Throws only what ``ensureReady()`` throws, the answer a write would start with. Nothing
    /// is unlocked and no prompt can appear: an item that is locked, that two keyring items
    /// claim, whose secret is not text or cannot be decoded, and a missing one are left out, as
    /// is a whole store when its search fails; the caller asks for those alone, which answers
    /// or says why.
    func lookupNow(_ items: [SecretItem]) throws -> [SecretItem: SecretBytes] {
        guard !items.isEmpty else { return [:] }
        let service = try readyService()
        var found: [SecretItem: SecretBytes] = [:]
        for (store, wanted) in Dictionary(grouping: Set(items), by: \.store) {
            guard
                let listed = try? search(
                    ["application": "apnsctl", "store": store],
                    in: service,
                    loadingSecrets: true,
                    what: "read the store's secrets"
                )
            else { continue }
            for (item, text) in Self.onlyUnlockedTexts(of: wanted, among: listed) {
                if let secret = try? decode(text, kind: item.kind) { found[item] = secret }
            }
        }
        return found
    }

    /// Each item's secret where exactly one found item has its attributes (as a search for them
    /// would find) and that one is unlocked with a text secret.
    static func onlyUnlockedTexts(of items: [SecretItem], among found: [FoundItem]) -> [(SecretItem, [UInt8])] {
        // Only an item with the same alias and kind can have all of an item's attributes.
        var byName: [String: [FoundItem]] = [:]
        for entry in found {
            guard let alias = entry.attributes["alias"], let kind = entry.attributes["kind"] else { continue }
            byName["\(kind)\u{0}\(alias)", default: []].append(entry)
        }
        return items.compactMap { item in
            let wanted = item.attributes
            let matches = (byName["\(item.kind.rawValue)\u{0}\(item.alias)"] ?? []).filter { entry in
                wanted.allSatisfy { entry.attributes[$0.key] == $0.value }
            }
            guard matches.count == 1, !matches[0].locked, let text = matches[0].text else { return nil }
            return (item, text)
        }
    }
}
