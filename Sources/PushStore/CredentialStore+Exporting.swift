import CredentialFormats
import Foundation

/// How ``CredentialStore/export(named:as:)`` writes a stored credential for other tools.
public enum ExportFormat: Sendable {
    /// The certificate, its chain and the unencrypted private key, as `curl --cert FILE` wants
    /// them; a token key as its .p8 PEM.
    case pem
    /// A new PKCS#12 bundle protected by a new password. The password is asked of `newPassword`
    /// only once the credential is known to be a certificate with its key, so that a refusal
    /// never prompts first.
    case pkcs12(newPassword: PasswordSource, style: PKCS12Writer.Style = .modern)

    /// A new PKCS#12 bundle protected by `password`.
    public static func pkcs12(password: SecretBytes, style: PKCS12Writer.Style = .modern) -> ExportFormat {
        .pkcs12(newPassword: .fixed(password), style: style)
    }

    /// The format as a sentence names it: "PEM", "PKCS#12" or "legacy PKCS#12".
    public var name: String {
        switch self {
        case .pem: "PEM"
        case .pkcs12(_, .legacy): "legacy PKCS#12"
        case .pkcs12(_, .modern): "PKCS#12"
        }
    }
}

/// A stored credential written out in an ``ExportFormat``.
public struct ExportedCredential: Sendable {
    /// The alias it is stored under (the friendly name of a PKCS#12 bundle).
    public let alias: String
    /// The file's bytes. A PEM export holds the private key unencrypted: write it only where
    /// the person asked, and only they may read it (``PrivateFile/write(_:to:overwrite:mode:)``).
    public let contents: SecretBytes
    /// ``ExportFormat/name`` of the format written.
    public let formatName: String
}

extension CredentialStore {
    /// The stored credential `alias` as a file for other tools (curl, apns2, Houston, Pushy…):
    /// a certificate with its key as PEM or as a new PKCS#12, a token key as its .p8 PEM.
    ///
    /// Refuses, with a ``CredentialError``, an alias the store does not hold
    /// (``ErrorCode/aliasNotFound``), a token key asked for as PKCS#12
    /// (``ErrorCode/notExportable``), a stored certificate whose private key is missing
    /// (``ErrorCode/noPrivateKey``) and a PKCS#12 whose new password was not given
    /// (``ErrorCode/passwordRequired``). The secret is read from the Secret Service under the
    /// store's shared lock, as ``identity(of:)`` and ``tokenKey(of:)`` read it.
    public func export(named alias: String, as format: ExportFormat) async throws -> ExportedCredential {
        guard let credential = try await credential(named: alias) else {
            throw CredentialError.aliasNotFound(
                alias,
                "No credential named \(alias) in the store at \(path).",
                hint: "List the store's credentials to see their aliases."
            )
        }
        let contents: [UInt8]
        switch (credential.kind, format) {
        case (.tokenKey, .pem):
            if let remote = try await remoteTokenKey(of: credential) {
                throw CredentialError(
                    .notExportable,
                    "The token key \(remote.keyID) of \(credential.alias) signs inside the store that holds it and never leaves it, so it cannot be exported.",
                    hint: "Send with the stored alias; to use the key elsewhere, give that place access to the store.",
                    alias: credential.alias
                )
            }
            contents = Array(PEMWriter.privateKey(try await tokenKey(of: credential).pkcs8).utf8)
        case (.tokenKey, .pkcs12):
            throw CredentialError(
                .notExportable,
                "A token key has no certificate, so it cannot be a PKCS#12 bundle.",
                hint: "Export it as PEM to get the .p8 key.",
                alias: credential.alias,
                remedy: .tokenKeyAsPEM(alias: credential.alias)
            )
        case (.certificate, .pem):
            let identity = try await identity(of: credential)
            let key = try Self.exportableKey(of: identity, alias: credential.alias)
            let chain = ([identity.certificate] + identity.chain).map { PEMWriter.certificate($0.der) }.joined()
            contents = Array((chain + PEMWriter.privateKey(key)).utf8)
        case (.certificate, .pkcs12(let newPassword, let style)):
            let identity = try await identity(of: credential)
            let key = try Self.exportableKey(of: identity, alias: credential.alias)
            guard let password = try newPassword(PasswordRequest(path: credential.alias, what: "new PKCS#12")) else {
                throw CredentialError(
                    .passwordRequired,
                    "No password was given for the new bundle.",
                    hint: nil,
                    alias: credential.alias
                )
            }
            contents = try PKCS12Writer.write(
                certificateDER: identity.certificate.der,
                chainDER: identity.chain.map(\.der),
                privateKey: key,
                password: password,
                friendlyName: credential.alias,
                style: style
            )
        }
        return ExportedCredential(alias: credential.alias, contents: SecretBytes(contents), formatName: format.name)
    }

    /// The key stored with a certificate. The store keeps none without one, so a missing key
    /// means the secret was changed outside the store: said so, never a crash.
    private static func exportableKey(of identity: CredentialFile, alias: String) throws -> SecretBytes {
        guard let key = identity.privateKeyPKCS8 else {
            throw CredentialError(
                .noPrivateKey,
                "The stored \(alias) has a certificate but no private key, so it cannot be exported with its key.",
                hint: "Remove it from the store and import the certificate again together with its key.",
                alias: alias
            )
        }
        return key
    }
}

extension CredentialStore {
    /// Refuses an export written inside a store folder: this store's, or any other found by
    /// walking up from `destination` (a keyring store or a team store). A private key there sits
    /// beside files that are backed up or shared as the store's, and a team store's folder is a
    /// git working tree its members push from.
    public func checkExportDestination(_ destination: String) throws {
        let own = medium == nil ? StorePaths.realPath(root.path) : nil
        var folder = URL(fileURLWithPath: destination).standardizedFileURL.deletingLastPathComponent().path
        // The nearest folder that exists, with its links resolved: where the file would really go.
        while StorePaths.realPath(folder) == nil, folder != "/" {
            folder = (folder as NSString).deletingLastPathComponent
        }
        var current = StorePaths.realPath(folder) ?? folder
        while true {
            if current == own || StoreFolder.isStoreFolder(current) {
                throw CredentialError(
                    .invalidArgument,
                    path: destination,
                    "This path is inside the credential store folder \(current): an export written there would sit among the store's files (a team store's folder is a git working tree its members push from). Nothing was written.",
                    hint: "Write the export to a folder outside the store."
                )
            }
            if current == "/" || current.isEmpty { return }
            current = (current as NSString).deletingLastPathComponent
        }
    }
}
