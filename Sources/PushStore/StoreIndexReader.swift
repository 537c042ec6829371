import CredentialFormats
import Foundation
import PushCore

/// Reads the store's index as apnsctl writes it, without `JSONDecoder`.
///
/// Every command that uses a stored credential reads the index first, and a cold `send` waits
/// for it: the credential's secret is looked up by what the index says of it. `JSONDecoder`
/// checks each type it decodes against several protocols at run time, and the first check of a
/// type searches every protocol conformance in the program: about a tenth of a millisecond
/// each, some twenty of them, on the path of every cold command (docs/performance.md).
///
/// This reader takes exactly the shape ``ReportSchema/encoder()`` writes (snake_case keys,
/// ISO 8601 dates) and nothing else: any other key, a duplicate key, a value of another type, a
/// missing field or a date it cannot read makes it return nil, and the caller decodes with
/// `JSONDecoder`, which then either accepts the file (an index edited by hand, in a form that
/// decoder also takes) or says what is wrong with it. So what is accepted, and every error
/// message, stays the decoder's. ``StoreIndexReaderTests`` holds the two to the same result.
package enum StoreIndexReader {
    /// The index in `bytes`: read directly when it has the shape apnsctl writes, by
    /// `JSONDecoder` otherwise (whose error is the one thrown).
    package static func index(_ bytes: [UInt8]) throws -> StoreIndex {
        if let index = decode(bytes) { return index }
        return try ReportSchema.decoder().decode(StoreIndex.self, from: Data(bytes))
    }

    static func decode(_ bytes: [UInt8]) -> StoreIndex? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = IndexJSONReader(buffer)
            guard let value = parser.document() else { return nil }
            return index(value)
        }
    }

    // MARK: The index's shape

    private static func index(_ value: IndexJSON) -> StoreIndex? {
        guard let fields = value.fields(allowed: ["schema_version", "credentials", "requests"]),
            let version = fields["schema_version"]?.integer,
            case .array(let credentialValues)? = fields["credentials"]
        else { return nil }
        var index = StoreIndex()
        index.schemaVersion = version
        var credentials: [StoredCredential] = []
        credentials.reserveCapacity(credentialValues.count)
        for credentialValue in credentialValues {
            guard let credential = credential(credentialValue) else { return nil }
            credentials.append(credential)
        }
        index.credentials = credentials
        switch fields["requests"] {
        case nil, .null?:
            index.requests = nil
        case .array(let requestValues)?:
            var requests: [PendingRequest] = []
            for requestValue in requestValues {
                guard let request = request(requestValue) else { return nil }
                requests.append(request)
            }
            index.requests = requests
        default:
            return nil
        }
        return index
    }

    private static let credentialKeys: Set<String> = [
        "alias", "kind", "topics", "environments", "imported_at", "source", "secret", "bundle_file",
        "certificate_file", "sha256", "subject", "team_id", "not_before", "not_after", "key_id",
        "public_key_fingerprint",
    ]

    private static func credential(_ value: IndexJSON) -> StoredCredential? {
        guard let fields = value.fields(allowed: credentialKeys),
            let alias = fields["alias"]?.string,
            let kind = fields["kind"]?.string.flatMap(CredentialKind.init(rawValue:)),
            let topics = fields["topics"]?.strings,
            let environmentNames = fields["environments"]?.strings,
            let importedAt = fields["imported_at"]?.date,
            let secret = fields["secret"]?.string.flatMap(SecretItem.Kind.init(rawValue:))
        else { return nil }
        var environments: [PushEnvironment] = []
        for name in environmentNames {
            guard let environment = PushEnvironment(rawValue: name) else { return nil }
            environments.append(environment)
        }
        guard let source = fields.optionalString("source"),
            let bundleFile = fields.optionalString("bundle_file"),
            let certificateFile = fields.optionalString("certificate_file"),
            let sha256 = fields.optionalString("sha256"),
            let subject = fields.optionalString("subject"),
            let teamID = fields.optionalString("team_id"),
            let notBefore = fields.optionalDate("not_before"),
            let notAfter = fields.optionalDate("not_after"),
            let keyID = fields.optionalString("key_id"),
            let publicKeyFingerprint = fields.optionalString("public_key_fingerprint")
        else { return nil }
        return StoredCredential(
            alias: alias,
            kind: kind,
            topics: topics,
            environments: environments,
            importedAt: importedAt,
            source: source,
            secret: secret,
            bundleFile: bundleFile,
            certificateFile: certificateFile,
            sha256: sha256,
            subject: subject,
            teamID: teamID,
            notBefore: notBefore,
            notAfter: notAfter,
            keyID: keyID,
            publicKeyFingerprint: publicKeyFingerprint
        )
    }

    private static let requestKeys: Set<String> = [
        "alias", "public_key_fingerprint", "subject", "key_type", "requested_at", "request_file", "alias_chosen",
    ]

    private static func request(_ value: IndexJSON) -> PendingRequest? {
        guard let fields = value.fields(allowed: requestKeys),
            let alias = fields["alias"]?.string,
            let fingerprint = fields["public_key_fingerprint"]?.string,
            let subject = fields["subject"]?.string,
            let keyType = fields["key_type"]?.string,
            let requestedAt = fields["requested_at"]?.date,
            let requestFile = fields.optionalString("request_file"),
            case .bool(let aliasChosen)? = fields["alias_chosen"]
        else { return nil }
        return PendingRequest(
            alias: alias,
            publicKeyFingerprint: fingerprint,
            subject: subject,
            keyType: keyType,
            requestedAt: requestedAt,
            requestFile: requestFile,
            aliasChosen: aliasChosen
        )
    }
}
