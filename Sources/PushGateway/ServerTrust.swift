import CredentialFormats
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import PushCore
import SwiftASN1
import X509

/// Verifies the server's certificate chain and remembers what was presented.
///
/// swift-nio-ssl hides the presented chain unless a custom verification callback is installed,
/// and BoringSSL's failure says only "CERTIFICATE_VERIFY_FAILED". To report the chain and to
/// tell an untrusted chain from an expired certificate or a wrong host name, the chain is
/// verified here with swift-certificates' `Verifier` (RFC 5280 path validation + RFC 6125
/// server identity) against the system trust store (the same bundle swift-nio-ssl reads on
/// Linux) and the CA files given. swift-nio-ssl still checks the host name after the handshake
/// (`.fullVerification`), so a mistake here cannot make an untrusted server acceptable.
final class ServerTrustEvaluator: Sendable {
    struct Outcome: Sendable {
        var presented: [HandshakeReport.CertificateInfo] = []
        var verdict: HandshakeReport.TrustVerdict = .notChecked
        var detail: String?
        /// The root the chain was verified up to.
        var anchor: HandshakeReport.Anchor?
    }

    let host: String
    /// The roots given (`--ca`), tried on their own first when the system's are trusted too.
    let customRoots: [Certificate]
    let trustSystemRoots: Bool
    /// A bundle's roots, trusted in place of the system's (nil: the system's, when trusted).
    let bundleRoots: [Certificate]?
    let clock: GatewayClock
    private let outcomeBox = NIOLockedValueBox(Outcome())

    init(
        host: String,
        customRoots: [Certificate],
        trustSystemRoots: Bool,
        bundleRoots: [Certificate]? = nil,
        clock: GatewayClock
    ) {
        self.host = host
        self.customRoots = customRoots
        self.trustSystemRoots = trustSystemRoots
        self.bundleRoots = bundleRoots
        self.clock = clock
    }

    /// The roots trusted besides those given as CA files: a bundle's, the system's, or none.
    var usesBaseRoots: Bool { trustSystemRoots || bundleRoots != nil }

    /// Every root trusted. Reading the system's store parses every certificate of the
    /// machine's bundle, a large share of a cold `send` (docs/performance.md): it is only read
    /// when needed.
    var allRoots: CertificateStore {
        if let bundleRoots { return CertificateStore(bundleRoots + customRoots) }
        guard trustSystemRoots else { return CertificateStore(customRoots) }
        return customRoots.isEmpty
            ? CertificateStore.systemTrustRoots : CertificateStore.systemTrustRoots.appending(contentsOf: customRoots)
    }

    var outcome: Outcome { outcomeBox.withLockedValue { $0 } }

    /// The callback for `NIOSSLClientHandler(context:serverHostname:customVerificationCallback:)`.
    func verify(_ presented: [NIOSSLCertificate], promise: EventLoopPromise<NIOSSLVerificationResult>) {
        let certificates: [Certificate]
        let encoded: [[UInt8]]
        do {
            encoded = try presented.map { try $0.toDERBytes() }
            certificates = try encoded.map { try Certificate(derEncoded: $0) }
        } catch {
            record(
                verdict: .untrusted,
                detail: "the server's certificate cannot be parsed (\(UserFacing.describe(error)))",
                presented: []
            )
            promise.succeed(.failed)
            return
        }
        let infos = zip(certificates, encoded).map { Self.info($0, der: $1) }
        guard let leaf = certificates.first else {
            record(verdict: .untrusted, detail: "the server presented no certificate", presented: [])
            promise.succeed(.failed)
            return
        }
        let intermediates = CertificateStore(certificates.dropFirst())
        let host = self.host
        let now = clock.now()
        let isIP = Self.isIPAddress(host)
        let customFirst = usesBaseRoots && !customRoots.isEmpty ? CertificateStore(customRoots) : nil
        Task {
            func validForThisServer(_ roots: CertificateStore) async -> [Certificate]? {
                var verifier = Verifier(rootCertificates: roots) {
                    RFC5280Policy()
                    ServerIdentityPolicy(serverHostname: isIP ? nil : host, serverIP: isIP ? host : nil)
                }
                if case .validCertificate(let chain) = await verifier.validate(leaf: leaf, intermediates: intermediates)
                {
                    return Array(chain)
                }
                return nil
            }
            // A chain to a root given with --ca is trusted whatever the system's store holds,
            // so that store is only read when the chain does not end at one of those.
            var chain: [Certificate]?
            if let customFirst { chain = await validForThisServer(customFirst) }
            if chain == nil { chain = await validForThisServer(self.allRoots) }
            if let chain, let root = chain.last {
                self.record(verdict: .trusted, detail: nil, presented: infos)
                self.recordAnchor(root)
                promise.succeed(.certificateVerified)
                return
            }
            let allRoots = self.allRoots
            // Tell the causes apart: expiry first (the most common), then trust, then the name.
            if let stale = certificates.first(where: { now > $0.notValidAfter || now < $0.notValidBefore }) {
                let which = stale == leaf ? "the server's certificate" : "a certificate in the server's chain"
                let when = ISO8601DateFormatter().string(
                    from: now > stale.notValidAfter ? stale.notValidAfter : stale.notValidBefore
                )
                self.record(
                    verdict: .expired,
                    detail:
                        "\(which) (\(stale.subject)) is \(now > stale.notValidAfter ? "expired since" : "not valid before") \(when)",
                    presented: infos
                )
                promise.succeed(.failed)
                return
            }
            var trustOnly = Verifier(rootCertificates: allRoots) { RFC5280Policy() }
            switch await trustOnly.validate(leaf: leaf, intermediates: intermediates) {
            case .validCertificate:
                self.record(
                    verdict: .hostnameMismatch,
                    detail: "the certificate names \(Self.names(leaf)), not \(host)",
                    presented: infos
                )
            case .couldNotValidate(let failures):
                let reason = failures.first.map { String(describing: $0.policyFailureReason) }
                self.record(
                    verdict: .untrusted,
                    detail:
                        "no chain from \(leaf.subject) to a trusted root (issuer \(certificates.last?.issuer.description ?? "?"))"
                        + (reason.map { ": \($0)" } ?? ""),
                    presented: infos
                )
            }
            promise.succeed(.failed)
        }
    }

    private func record(
        verdict: HandshakeReport.TrustVerdict,
        detail: String?,
        presented: [HandshakeReport.CertificateInfo]
    ) {
        outcomeBox.withLockedValue { outcome in
            outcome.verdict = verdict
            outcome.detail = detail
            if !presented.isEmpty { outcome.presented = presented }
        }
    }

    /// The root a verified chain ends at, where it came from, and which APNs root it is.
    private func recordAnchor(_ root: Certificate) {
        let spki = TrustStore.spkiSHA256(root)
        let origin: HandshakeReport.Anchor.Origin =
            customRoots.contains(root) ? .caFile : bundleRoots != nil ? .bundle : .system
        let subject = NameText.describe(root.subject)
        let anchor = HandshakeReport.Anchor(
            subject: subject,
            spkiSHA256: spki,
            sha256: Self.fingerprint(root),
            origin: origin,
            apnsRoot: APNsTrustRoots.table.first { $0.spkiSHA256 == spki && $0.subject == subject }?.name
        )
        outcomeBox.withLockedValue { $0.anchor = anchor }
    }

    /// What the handshake report says of a certificate; `der`, when given, is the encoding it
    /// was parsed from (as the server sent it), so that it is not encoded again to be hashed.
    static func info(_ certificate: Certificate, der: [UInt8]? = nil) -> HandshakeReport.CertificateInfo {
        HandshakeReport.CertificateInfo(
            subject: NameText.describe(certificate.subject),
            issuer: NameText.describe(certificate.issuer),
            notBefore: certificate.notValidBefore,
            notAfter: certificate.notValidAfter,
            sha256: fingerprint(certificate, der: der)
        )
    }

    /// The SHA-256 of the certificate's DER encoding, as colon-separated upper-case hex.
    static func fingerprint(_ certificate: Certificate, der: [UInt8]? = nil) -> String {
        let bytes =
            der
            ?? {
                var serializer = DER.Serializer()
                return (try? serializer.serialize(certificate)).map { serializer.serializedBytes } ?? []
            }()
        return HexText.of(SHA256.hash(data: bytes), uppercase: true, separator: ":")
    }

    static func names(_ certificate: Certificate) -> String {
        var names: [String] = []
        if let san = try? certificate.extensions.subjectAlternativeNames {
            for name in san {
                switch name {
                case .dnsName(let dns): names.append(dns)
                case .ipAddress(let bytes): names.append(ipString(Array(bytes.bytes)))
                default: break
                }
            }
        }
        return names.isEmpty ? "no host name" : names.joined(separator: ", ")
    }

    static func ipString(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        if bytes.count == 16 {
            return stride(from: 0, to: 16, by: 2).map { String(Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]), radix: 16) }
                .joined(separator: ":")
        }
        return HexText.of(bytes)
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    /// The bytes of a CA file or bundle: bounded, and to the end rather than by size, so that
    /// `<(command)` and /dev/stdin work too.
    static func readTrustFile(_ path: String, as trustFile: GatewayError.TrustFile) throws -> [UInt8] {
        do {
            return try InputFile.read(path: path, kind: .caBundle)
        } catch let error as CredentialError where error.code == .tooLarge {
            // A gateway error, so that the connection's report carries it as it is.
            throw GatewayError(.fileTooLarge, error.message, hint: error.hint, path: path)
        } catch {
            throw GatewayError(
                .caFileUnreadable,
                "\(path): the \(trustFile.name) cannot be read.",
                hint: "Check the \(trustFile.name)'s path and permissions.",
                trustFile: trustFile
            )
        }
    }

    /// Reads every certificate in the PEM (or DER) files given as extra trust roots (or, as
    /// `trustFile` says, as a bundle in place of the system's).
    static func loadCertificates(
        paths: [String],
        as trustFile: GatewayError.TrustFile = .addedRoots
    ) throws
        -> [Certificate]
    {
        let name = trustFile.name
        var certificates: [Certificate] = []
        for path in paths {
            let data = try readTrustFile(path, as: trustFile)
            let text = String(decoding: data, as: UTF8.self)
            do {
                if text.contains("-----BEGIN CERTIFICATE-----") {
                    let documents = try PEMDocument.parseMultiple(pemString: text).filter {
                        $0.discriminator == "CERTIFICATE"
                    }
                    certificates += try documents.map { try Certificate(pemDocument: $0) }
                } else {
                    certificates.append(try Certificate(derEncoded: [UInt8](data)))
                }
            } catch {
                throw GatewayError(
                    .caFileInvalid,
                    "\(path): the \(name) holds no readable certificate (\(UserFacing.describe(error))).",
                    hint: trustFile == .bundle
                        ? "Give a PEM bundle of root certificates, such as the system's ca-certificates.crt."
                        : "Give a PEM file with -----BEGIN CERTIFICATE----- blocks, such as the CA a local gateway writes out.",
                    trustFile: trustFile
                )
            }
            if certificates.isEmpty {
                throw GatewayError(
                    .caFileInvalid,
                    "\(path): the \(name) holds no certificate.",
                    hint: trustFile == .bundle
                        ? "Give a PEM bundle of root certificates, such as the system's ca-certificates.crt."
                        : "Give a PEM certificate file.",
                    trustFile: trustFile
                )
            }
        }
        return certificates
    }
}
