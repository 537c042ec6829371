import ArgumentParser
import Foundation
import LocalGateway
import PushCredentials

#if canImport(Glibc)
import Glibc
#endif

struct Gateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "A local APNs-compatible gateway (HTTP/2 over TLS) for offline tests, demos and CI.",
        discussion: """
            Examples. The .p12 password is in the environment variable P12_PASSWORD.
              apnsctl gateway mint-identity --topic com.example.app --environment both \\
                --ca-dir gw --out app.p12 --password-env P12_PASSWORD
              apnsctl gateway serve --client-ca gw/client-ca.pem \\
                --ca-out gw/server-ca.pem --port 2197
            """,
        subcommands: [Serve.self, MintIdentity.self]
    )

    /// A folder with the client CA that mint-identity signs with and serve trusts.
    static func loadOrCreateAuthority(folder: String) throws -> TestCertificateAuthority {
        let certificatePath = folder + "/client-ca.pem"
        let keyPath = folder + "/client-ca.key"
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
        try writePrivate(PEMWriter.privateKey(authority.privateKeyPKCS8), to: keyPath)
        try writePrivate(authority.certificatePEM, to: certificatePath)
        return authority
    }

    static func writePrivate(_ text: String, to path: String) throws {
        try PrivateFile.write(Array(text.utf8), to: path, overwrite: true)
    }
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    private static let lock = NSLock()
    static func keep(_ source: any DispatchSourceSignal) {
        lock.lock()
        sources.append(source)
        lock.unlock()
    }
}
