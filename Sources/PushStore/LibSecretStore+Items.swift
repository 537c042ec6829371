internal import CLibSecret
import CredentialFormats
import Foundation

extension LibSecretStore {
    /// Every apnsctl item whose `store` attribute is `store`, found by its attributes without
    /// unlocking anything or reading a single secret.
    func itemsNow(store: String) throws -> [SecretItem] {
        let service = try readyService()
        let listed = try search(
            ["application": "apnsctl", "store": store],
            in: service,
            loadingSecrets: false,
            what: "list the store's secrets"
        )
        return Self.secretItems(of: listed, store: store)
    }

    /// The items of `store` among what a search of it found, of the kinds this version knows.
    static func secretItems(of listed: [FoundItem], store: String) -> [SecretItem] {
        var items: [SecretItem] = []
        for entry in listed {
            let attributes = entry.attributes
            // An item of a kind this version does not know is not this version's to judge.
            guard attributes["application"] == "apnsctl", attributes["store"] == store,
                let alias = attributes["alias"],
                let kind = attributes["kind"].flatMap(SecretItem.Kind.init(rawValue:))
            else { continue }
            let identifier = attributes[kind == .tokenKey ? "key-id" : "fingerprint"] ?? ""
            items.append(SecretItem(store: store, alias: alias, kind: kind, identifier: identifier))
        }
        return items
    }
}

extension SecretStore {
    /// A secret store that cannot list its items says so; orphaned secrets then go unreported.
    public func items(store: String) throws -> [SecretItem] {
        throw CredentialError(
            .secretStoreUnavailable,
            "This secret store cannot list its items, so secrets left without an index entry cannot be found.",
            hint: nil
        )
    }
}
