internal import CLibSecret
import Foundation

extension LibSecretStore {
    /// The secrets of `items` read together, and each of their stores' items as
    /// ``items(store:)`` lists them (the check's orphan search needs no search of its own).
    ///
    /// For each store, with libsecret's path-level API (no item object per item): one search of
    /// the store and one of each item's attributes (the search its one-item lookup makes), all
    /// sent at once, then the secrets of the items exactly one unlocked keyring item answers in
    /// one `GetSecrets`. An item object is made only for a keyring item of the store that no
    /// item asked for (an orphan, a pending request's key), to list its attributes.
    ///
    /// Throws only what ``ensureReady()`` throws, the answer a write would start with. Nothing
    /// is unlocked and no prompt can appear: an item that is locked, that two keyring items
    /// claim, whose secret is not text or cannot be decoded, and a missing one are left out, as
    /// is a whole store (from both answers) when one of its reads fails; the caller asks for
    /// those alone, which answers or says why.
    func lookupListingNow(
        _ items: [SecretItem]
    ) throws -> (
        secrets: [SecretItem: SecretBytes], listed: [String: [SecretItem]]
    ) {
        guard !items.isEmpty else { return ([:], [:]) }
        let service = try readyService()
        var found: [SecretItem: SecretBytes] = [:]
        var listing: [String: [SecretItem]] = [:]
        for (store, wanted) in Dictionary(grouping: Set(items), by: \.store) {
            guard let read = try? read(wanted, of: store, in: service) else { continue }
            listing[store] = read.listed
            for (item, text) in read.texts {
                if let secret = try? decode(text, kind: item.kind) { found[item] = secret }
            }
        }
        return (found, listing)
    }

    /// One store's part of ``lookupListingNow(_:)``: the text secret of each of `wanted` that
    /// exactly one keyring item has (unlocked), and the store's items.
    private func read(
        _ wanted: [SecretItem],
        of store: String,
        in service: GObjectReference
    ) throws -> (texts: [SecretItem: [UInt8]], listed: [SecretItem]) {
        let what = "read the store's secrets"
        let searches = try searchPaths(
            [["application": "apnsctl", "store": store]] + wanted.map(\.attributes),
            in: service,
            what: what
        )
        let inStore = searches[0]
        var readable: [SecretItem: String] = [:]
        var asked: [String: SecretItem] = [:]
        for (item, found) in zip(wanted, searches.dropFirst()) {
            // Every keyring item found for an item's attributes is that item as the store lists it.
            for path in found.all { asked[path] = item }
            if found.unlocked.count == 1, found.locked.isEmpty { readable[item] = found.unlocked[0] }
        }
        let byPath = try texts(atPaths: Array(Set(readable.values)), in: service, what: what)
        let unasked = try attributes(atPaths: inStore.all.filter { asked[$0] == nil }, in: service, what: what)
        let listing = inStore.all.compactMap { asked[$0] } + Self.secretItems(of: unasked, store: store)
        return (readable.compactMapValues { byPath[$0] }, listing)
    }
}
