import SwiftASN1
import X509

/// One topic a push certificate covers, with the kinds of push it may carry there.
public struct PushTopic: Hashable, Sendable, Codable {
    public var name: String
    /// As Apple writes them: `app`, `voip`, `complication`, `fileprovider`, ...
    public var kinds: [String]

    public init(name: String, kinds: [String]) {
        self.name = name
        self.kinds = kinds
    }

    /// A topic known only by its name (as the store records it), its kind told by Apple's
    /// suffixes (``PushType/topicSuffixes``, whose push type names are Apple's kinds):
    /// `com.x.voip` is `voip`, a topic without a known suffix is `app`.
    public init(inferring name: String) {
        self.init(name: name, kinds: [PushType.suffixed(name)?.pushType.rawValue ?? "app"])
    }

    /// Topic objects for topic names, as every JSON report gives them.
    public static func described(_ names: [String]) -> [PushTopic] { names.map(PushTopic.init(inferring:)) }
}

/// Apple's topics extension (`1.2.840.113635.100.6.3.6`).
///
/// Its value is a SEQUENCE that alternates a UTF8String topic and a SEQUENCE OF UTF8String kinds:
/// `{ "com.x", { "app" }, "com.x.voip", { "voip" }, ... }`.
public struct PushTopicsExtension: Hashable, Sendable {
    public var topics: [PushTopic]

    public init(topics: [PushTopic]) { self.topics = topics }

    /// Decodes the extension; throws `CertificateError`-style ASN.1 errors when it is malformed.
    public init(_ ext: Certificate.Extension) throws {
        guard ext.oid == .ApplePushExtensionID.topics else {
            throw ASN1Error.invalidASN1Object(reason: "expected the push topics extension, got \(ext.oid)")
        }
        let root = try DER.parse(ext.value)
        self.topics = try DER.sequence(root, identifier: .sequence) { nodes in
            var topics: [PushTopic] = []
            while let topicNode = nodes.next() {
                let name = String(try ASN1UTF8String(derEncoded: topicNode))
                guard let kindsNode = nodes.next() else {
                    throw ASN1Error.invalidASN1Object(reason: "topic \(name) has no list of kinds")
                }
                let kinds = try DER.sequence(of: ASN1UTF8String.self, identifier: .sequence, rootNode: kindsNode)
                topics.append(PushTopic(name: name, kinds: kinds.map { String($0) }))
            }
            return topics
        }
    }

    /// Encodes the extension, for minting test identities.
    public func makeCertificateExtension(critical: Bool = false) throws -> Certificate.Extension {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            for topic in topics {
                try coder.serialize(ASN1UTF8String(topic.name))
                try coder.appendConstructedNode(identifier: .sequence) { kinds in
                    for kind in topic.kinds { try kinds.serialize(ASN1UTF8String(kind)) }
                }
            }
        }
        return Certificate.Extension(
            oid: .ApplePushExtensionID.topics,
            critical: critical,
            value: serializer.serializedBytes[...]
        )
    }
}
