import CredentialFormats
import Foundation
import LocalGateway
import PushStore
import TestSupport
import Testing
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `gateway serve` does around the gateway, from the library alone: the files it refuses,
/// reads and writes, and the stop it waits for.
@Suite(.serialized)
struct ServeTests {
    /// A signal watched as a command line watches SIGTERM: its default action off, a dispatch
    /// source that completes the stop. The source lives as long as the watch.
    final class SignalWatch: @unchecked Sendable {
        let stop = Once<Bool>()
        private var source: (any DispatchSourceSignal)?

        init(_ number: Int32) {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [stop] in stop.complete(true) }
            source.resume()
            self.source = source
        }

        deinit { source?.cancel() }
    }

    @Test func writesTheCABeforeThePortAndTheStatisticsOnceStoppedBySignal() async throws {
        let folder = try TemporaryFolder()
        var files = LocalGateway.ServeFiles()
        files.certificateAuthority = folder.path("server-ca.pem")
        files.port = folder.path("gateway.port")
        files.statistics = folder.path("stats.json")
        var configuration = LocalGateway.Configuration(environment: .sandbox)
        configuration.port = 0
        let watches = Once<SignalWatch>()
        let listened = Once<Int>()

        let statistics = try await LocalGateway.serve(
            configuration,
            files: files,
            until: {
                // Armed before any file says the gateway is up.
                #expect(!FileManager.default.fileExists(atPath: folder.path("server-ca.pem")))
                #expect(!FileManager.default.fileExists(atPath: folder.path("gateway.port")))
                let watch = SignalWatch(SIGUSR2)
                watches.complete(watch)
                return watch.stop
            },
            onListening: { port in
                listened.complete(port)
                // The port file is there, and the CA before it.
                let written = try? String(contentsOfFile: folder.path("gateway.port"), encoding: .utf8)
                #expect(written == String(port))
                #expect(FileManager.default.fileExists(atPath: folder.path("server-ca.pem")))
                #expect(!FileManager.default.fileExists(atPath: folder.path("stats.json")))
                kill(getpid(), SIGUSR2)
            }
        )

        let port = await listened.value
        #expect(port > 0)
        let ca = try String(contentsOfFile: folder.path("server-ca.pem"), encoding: .utf8)
        #expect(
            try Certificate(pemEncoded: ca).extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil)
        )
        #expect(try posixPermissions(folder.path("gateway.port")) & 0o077 == 0)
        #expect(try posixPermissions(folder.path("stats.json")) & 0o077 == 0)
        let recorded = try Data(contentsOf: URL(fileURLWithPath: folder.path("stats.json")))
        #expect(try ReportSchema.decoder().decode(LocalGateway.Statistics.self, from: recorded) == statistics)
        #expect(String(decoding: recorded, as: UTF8.self).contains("\"refused_streams\""))
        _ = watches  // the signal source is kept until the gateway has stopped
    }

    @Test func anExistingCAFileIsRefusedUnlessItMayBeReplaced() async throws {
        let folder = try TemporaryFolder()
        let caFile = folder.path("server-ca.pem")
        try "the CA clients trust".write(toFile: caFile, atomically: true, encoding: .utf8)
        var files = LocalGateway.ServeFiles()
        files.certificateAuthority = caFile
        files.port = folder.path("gateway.port")
        var configuration = LocalGateway.Configuration(environment: .production)
        configuration.port = 0

        await #expect {
            try await LocalGateway.serve(
                configuration,
                files: files,
                until: {
                    Issue.record("a refused gateway started watching for its stop")
                    return Once<Bool>()
                }
            )
        } throws: { error in
            let error = error as? CredentialError
            return error?.code == .fileExists && error?.path == caFile && error?.hint?.contains("--") == false
        }
        #expect(try String(contentsOfFile: caFile, encoding: .utf8) == "the CA clients trust")
        #expect(!FileManager.default.fileExists(atPath: folder.path("gateway.port")), "it never started")

        files.replaceCertificateAuthority = true
        let statistics = try await LocalGateway.serve(
            configuration,
            files: files,
            until: {
                let stopped = Once<Bool>()
                stopped.complete(true)  // stops as soon as it listens
                return stopped
            }
        )
        #expect(statistics.streams == 0 && statistics.accepted == 0)
        let replaced = try String(contentsOfFile: caFile, encoding: .utf8)
        #expect(replaced.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(FileManager.default.fileExists(atPath: folder.path("gateway.port")))
    }

    @Test func aTokenKeyFileThatCannotBeReadIsNamedAndNothingIsWritten() async throws {
        let folder = try TemporaryFolder()
        var files = LocalGateway.ServeFiles()
        files.tokenKeys = [
            .init(
                keyID: Fixtures.keyID,
                teamID: Fixtures.teamID,
                publicKeyFile: Fixtures.cert("keys/AuthKey_ABC123DEFG.pub.pem")
            ),
            .init(
                keyID: "ZYX987WVUT",
                teamID: Fixtures.teamID,
                publicKeyFile: folder.path("missing.pub.pem"),
                environment: .sandbox
            ),
        ]
        files.tokenKeysNamedBy = "the key list"
        files.certificateAuthority = folder.path("server-ca.pem")
        files.port = folder.path("gateway.port")
        await #expect {
            try await LocalGateway.serve(
                LocalGateway.Configuration(environment: .sandbox),
                files: files,
                until: { Once<Bool>() }
            )
        } throws: { error in
            let error = error as? CredentialError
            return error?.path == folder.path("missing.pub.pem") && error?.message.contains("the key list") == true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }
}
