import X509

/// A distinguished name as swift-certificates' `description` writes it (most specific first,
/// `CN=…,O=…`, attributes of one RDN joined by `+`), written without `String(describing:)`.
///
/// The handshake of every `send` describes the server's certificates and the root they chain
/// to. `String(describing:)` checks each value's type against several printing protocols at
/// run time, and the first check of a type searches every protocol conformance in the program:
/// about a tenth of a millisecond each, on the handshake's path. Here each attribute's own
/// `description` is called directly. ``NameTextTests`` holds the two to the same text.
package enum NameText {
    package static func describe(_ name: DistinguishedName) -> String {
        let rdns = Array(name)
        var text = ""
        var index = rdns.count - 1
        while index >= 0 {
            if index != rdns.count - 1 { text += "," }
            var firstAttribute = true
            for attribute in rdns[index] {
                if !firstAttribute { text += "+" }
                firstAttribute = false
                text += attribute.description
            }
            index -= 1
        }
        return text
    }
}
