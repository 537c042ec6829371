import CredentialFormats
import Foundation

extension TestCertificateAuthority {
    /// The CA certificate's file in a CA folder: what the gateway's client CAs are given.
    public static func certificatePath(in folder: String) -> String { folder + "/client-ca.pem" }

    /// The CA key's file in a CA folder (mode 0600).
    public static func privateKeyPath(in folder: String) -> String { folder + "/client-ca.key" }

    /// The client CA kept in `folder` (client-ca.pem and client-ca.key): read when both files
    /// are there, else made, with the folder (0700) and both files (0600; the key first). Every
    /// identity minted from one folder is then trusted by a gateway given its client-ca.pem.
    public static func loadOrCreate(folder: String) throws -> TestCertificateAuthority {
        let certificatePath = certificatePath(in: folder)
        let keyPath = privateKeyPath(in: folder)
        if FileManager.default.fileExists(atPath: certificatePath), FileManager.default.fileExists(atPath: keyPath) {
            return try TestCertificateAuthority(
                certificatePEM: String(
                    decoding: InputFile.read(path: certificatePath, kind: .credential),
                    as: UTF8.self
                ),
                privateKeyPEM: String(decoding: InputFile.read(path: keyPath, kind: .credential), as: UTF8.self)
            )
        }
        try FileManager.default.createDirectory(
            atPath: folder,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let authority = try TestCertificateAuthority.generate()
        try PrivateFile.write(Array(PEMWriter.privateKey(authority.privateKeyPKCS8).utf8), to: keyPath, overwrite: true)
        try PrivateFile.write(Array(authority.certificatePEM.utf8), to: certificatePath, overwrite: true)
        return authority
    }
}

extension LocalGateway {
    /// The topics a test identity carries whatever its environments, as Apple issues them for
    /// an app: the bundle ID {app}, `.voip` {voip} and `.complication` {complication}.
    public static func testIdentityTopics(for topic: String) -> [PushTopic] {
        [
            PushTopic(name: topic, kinds: ["app"]), PushTopic(name: topic + ".voip", kinds: ["voip"]),
            PushTopic(name: topic + ".complication", kinds: ["complication"]),
        ]
    }

    /// A TEST push identity for `topic` as a PKCS#12 bundle protected by `password`: minted in
    /// Apple's shape with ``testIdentityTopics(for:)`` and signed by the client CA kept in
    /// `caFolder` (made there on first use, see ``TestCertificateAuthority/loadOrCreate(folder:)``),
    /// the CA certificate included. Only a gateway that trusts that CA accepts it; Apple never does.
    public static func mintIdentityBundle(
        topic: String,
        environments: [PushEnvironment],
        teamID: String = "ABCDE12345",
        days: Int = 395,
        caFolder: String,
        password: SecretBytes,
        style: PKCS12Writer.Style = .modern
    ) throws -> [UInt8] {
        let authority = try TestCertificateAuthority.loadOrCreate(folder: caFolder)
        let identity = try mintIdentity(
            topic: topic,
            environments: environments,
            teamID: teamID,
            topics: testIdentityTopics(for: topic),
            days: days,
            authority: authority
        )
        return try identity.pkcs12(password: password, friendlyName: topic, style: style)
    }
}
